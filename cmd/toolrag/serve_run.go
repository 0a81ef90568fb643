package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

// serve runs the local gateway until ctx ends (Ctrl-C, SIGTERM), prints
// where it listens and what to try once it accepts connections, and logs
// the shutdown.
func serve(ctx context.Context, stdout io.Writer) error {
	if os.Getenv("TOOLRAG_FOREGROUND") == "1" {
		// make run: Ctrl-C goes to the gateway alone, so that make sees a
		// clean exit instead of reporting "Interrupt".
		defer takeForeground()()
	}
	g, err := local.New(ctx, local.Options{})
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.CheckExposure(); err != nil {
		return err
	}
	ln, err := g.Listen()
	if err != nil {
		return err
	}
	if os.Getenv("TOOLRAG_READY_BANNER") == "1" {
		readyBanner(stdout, g.Env, ln.Addr().(*net.TCPAddr).Port)
	}
	err = g.Serve(ctx, ln)
	if ctx.Err() != nil && err == nil {
		slog.Info("gateway stopped cleanly (interrupted)")
	}
	return err
}

// exampleSecrets are the plain secrets of config/keys.example.yaml: the
// banner shows a key's secret only when it is one of these.
var exampleSecrets = []string{"dev-key-admin", "dev-key-full-access", "dev-key-restricted"}

// readyBanner tells a new user where the gateway is, which example keys
// work and what to try next.
func readyBanner(w io.Writer, env config.Env, port int) {
	host := env.Host
	if host == "" || host == "0.0.0.0" || host == "::" {
		host = "127.0.0.1"
	}
	base := fmt.Sprintf("http://%s", net.JoinHostPort(host, fmt.Sprint(port)))
	var keys []string
	try, admin := "<key from "+env.KeysPath+">", "an admin key"
	if !env.WithoutAuth {
		if list, err := config.LoadKeys(env.KeysPath); err == nil {
			for _, k := range list {
				for _, s := range exampleSecrets {
					if k.MatchesSecret(s) {
						role := "agent: meta-tools only"
						if k.Admin {
							role = "admin: the whole catalog"
						}
						keys = append(keys, fmt.Sprintf("    %-16s %-22s (%s)", k.ID, s, role))
						if s == "dev-key-full-access" {
							try = s
						}
						if k.Admin {
							admin = s
						}
					}
				}
			}
		}
	}
	fmt.Fprintf(w, "\ntoolrag gateway ready\n  MCP endpoint: %s%s\n  health:       %s/health\n", base, env.MCPPath, base)
	if env.ConsolePath != "" {
		fmt.Fprintf(w, "  console:      %s%s/ (sign in with %s)\n", base, env.ConsolePath, admin)
	}
	if len(keys) > 0 {
		fmt.Fprintf(w, "  example API keys (%s):\n%s\n", env.KeysPath, strings.Join(keys, "\n"))
	}
	fmt.Fprintf(w, "  next: curl -s -X POST %s/tool-rag/retrieve -H 'Authorization: Bearer %s' -H 'Content-Type: application/json' -d '{\"query\": \"reverse a string\"}'\n", base, try)
	fmt.Fprintf(w, "  connect an agent: docs/clients.md (e.g. claude mcp add --transport http toolrag %s%s --header \"Authorization: Bearer %s\")\n", base, env.MCPPath, try)
	fmt.Fprintln(w, "  stop: Ctrl-C")
}
