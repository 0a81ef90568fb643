package main

import (
	"context"
	"flag"
	"io"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/pkg/provision"
)

func init() {
	commands.Add("provision", subcommand.Command{
		Summary: "turn servers/<id>/manifest.yaml into config/registry.generated.yaml, docker-compose.servers.yml and infra/servers.generated.json",
		Usage:   "toolrag provision [--allow-setup] [--host] [--only ID] [--force] [--skip-setup]",
		About:   provisionAbout,
		Flags:   provisionFlags,
	})
}

const provisionAbout = `Reads every servers/<id>/manifest.yaml and writes config/registry.generated.yaml (the servers a
local gateway runs; a running gateway picks the change up within MCP_GATEWAY_CONFIG_POLL
seconds), docker-compose.servers.yml and infra/servers.generated.json (what make synth and
make deploy deploy). The setup steps of stdio servers (npm ci, pip install, ...) are shell
commands from the manifests: they run only with --allow-setup, and a server whose setup has not
run is left out of config/registry.generated.yaml until it has. A bad manifest changes nothing
and is reported as file:line.

With make run (the gateway on this machine, stdio servers included), after reviewing the setup:
  bin/toolrag provision --allow-setup --host
See docs/add-server.md.`

func provisionFlags(fs *flag.FlagSet) subcommand.Run {
	var o provision.Options
	fs.StringVar(&o.Root, "root", ".", "repository root holding servers/")
	fs.BoolVar(&o.Host, "host", false, "the gateway runs on the host: docker servers publish on 127.0.0.1")
	fs.BoolVar(&o.AllowSetup, "allow-setup", false, "run the setup steps of stdio manifests (shell commands from servers/<id>/manifest.yaml): review them first")
	fs.BoolVar(&o.Force, "force", false, "re-run every stdio setup step (with --allow-setup)")
	fs.StringVar(&o.Only, "only", "", "run setup for this server id only (generated files still list every server)")
	fs.BoolVar(&o.SkipSetup, "skip-setup", false, "write the generated files without running setup steps")
	return func(ctx context.Context, stdout, _ io.Writer) error {
		o.Out = stdout
		return provision.Run(ctx, o)
	}
}
