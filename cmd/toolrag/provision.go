package main

import (
	"context"
	"flag"
	"io"

	"github.com/toolrag/mcp-gateway/pkg/provision"
)

func init() {
	register("provision", "turn servers/<id>/manifest.yaml into config/registry.generated.yaml, docker-compose.servers.yml and infra/servers.generated.json", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet("provision", flag.ContinueOnError)
		fs.SetOutput(stderr)
		o := provision.Options{Out: stdout}
		fs.StringVar(&o.Root, "root", ".", "repository root holding servers/")
		fs.BoolVar(&o.Host, "host", false, "the gateway runs on the host: docker servers publish on 127.0.0.1")
		fs.BoolVar(&o.AllowSetup, "allow-setup", false, "run the setup steps of stdio manifests (shell commands from servers/<id>/manifest.yaml): review them first")
		fs.BoolVar(&o.Force, "force", false, "re-run every stdio setup step (with --allow-setup)")
		fs.StringVar(&o.Only, "only", "", "run setup for this server id only (generated files still list every server)")
		fs.BoolVar(&o.SkipSetup, "skip-setup", false, "write the generated files without running setup steps")
		if err := fs.Parse(args); err != nil {
			return err
		}
		return provision.Run(ctx, o)
	})
}
