// Command toolrag is the MCP gateway's CLI: serve the gateway locally and
// manage its catalog, index, keys, servers and model.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sort"
	"syscall"

	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name, summary string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{summary: summary, run: run}
}

func main() {
	// Log lines (a request's audit line among them) and the commands'
	// messages go to stderr through one buffered writer, in order, off the
	// request's path; it is flushed before the process exits.
	stderr := config.NewLogWriter(config.LogWriterConfig{Out: os.Stderr})
	slog.SetDefault(config.NewLogger(os.Getenv, stderr))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := cpuProfile()
	stopTracing := tracing.Init(ctx, serviceName(os.Args[1:]))
	err := run(ctx, os.Args[1:], os.Stdout, stderr)
	stopTracing()
	stopProfile()
	stderr.Close()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "toolrag:", err)
		os.Exit(1)
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

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return errors.New("missing command")
		}
		return nil
	}
	cmd, ok := commands[args[0]]
	if !ok {
		usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: toolrag <command> [flags]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nrun `toolrag <command> -h` for a command's flags")
}

func isHelp(a string) bool { return a == "-h" || a == "--help" || a == "-help" || a == "help" }
