// Command toolrag is the MCP gateway's CLI: serve the gateway locally and
// manage its catalog, index, keys, servers and model.
package main

import (
	"context"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

var commands = subcommand.Set{Program: "toolrag", Footer: "run `toolrag <command> -h` for a command's flags"}

func main() {
	// Log lines (a request's audit line among them) and the commands'
	// messages go to stderr through one buffered writer, in order, off the
	// request's path; it is flushed before the process exits.
	stderr := config.NewLogWriter(config.LogWriterConfig{Out: os.Stderr})
	slog.SetDefault(config.NewLogger(os.Getenv, stderr))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := subcommand.CPUProfile("toolrag")
	stopTracing := tracing.Init(ctx, serviceName(os.Args[1:]))
	err := commands.Run(ctx, os.Args[1:], os.Stdout, stderr)
	stopTracing()
	stopProfile()
	stderr.Close()
	if code := commands.ExitCode(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

// serviceName is the default OpenTelemetry service.name: toolrag for the
// gateway, toolrag-<command> for the others (bridge, sync, ...).
func serviceName(args []string) string {
	if len(args) == 0 || args[0] == "serve" {
		return "toolrag"
	}
	return "toolrag-" + args[0]
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }
