package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/lab/peerbench"
)

func benchPeersFlags(fs *flag.FlagSet) subcommand.Run {
	toolrag := fs.String("toolrag", "bin/toolrag", "the toolrag binary whose bridge and serve are measured")
	tools := fs.String("tools", ".tools/peers", "directory where scripts/peers.sh installed supergateway, mcp-proxy and server-everything")
	targets := fs.String("targets", "", "comma-separated targets to measure (default: all; with --baseline also its bridge and serve): "+strings.Join(peerbench.AllTargets, ", "))
	baseline := fs.String("baseline", "", "another toolrag binary whose bridge and serve are measured in the same rounds (before/after figures)")
	rounds := fs.Int("rounds", 3, "interleaved rounds")
	serial := fs.Int("serial", 1000, "serial calls per round")
	sessions := fs.Int("sessions", 32, "concurrent sessions")
	duration := fs.Duration("duration", 0, "concurrent phase per round (default 5s)")
	goEcho := fs.String("go-echo", "", "a servers/echo binary (go build ./servers/echo): also measure serve in front of it, an mcp-go upstream on protocol 2026-07-28")
	baselineGoEcho := fs.String("baseline-go-echo", "", "the servers/echo binary of the --baseline build (default: --go-echo)")
	protocol := fs.String("protocol", "2025-11-25", `MCP protocol version the driver asks for ("" lets mcp-go negotiate: 2026-07-28 where served)`)
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if _, err := os.Stat(*toolrag); err != nil {
			return fmt.Errorf("bench-peers: the toolrag binary to measure: %w (make build writes bin/toolrag)", err)
		}
		cfg := peerbench.Config{
			NodeModules:    filepath.Join(*tools, "node_modules"),
			Toolrag:        *toolrag,
			Baseline:       *baseline,
			GoEcho:         *goEcho,
			BaselineGoEcho: *baselineGoEcho,
			Rounds:         *rounds, SerialCalls: *serial, Sessions: *sessions, Duration: *duration,
			Protocol: *protocol,
			Progress: func(s string) { fmt.Fprintln(stderr, s) },
		}
		for _, t := range strings.Split(*targets, ",") {
			if t = strings.TrimSpace(t); t != "" {
				cfg.Targets = append(cfg.Targets, t)
			}
		}
		res, err := peerbench.Run(ctx, cfg)
		if err != nil {
			return fmt.Errorf("bench-peers: %w", err)
		}
		peerbench.Write(stdout, res, cfg)
		return nil
	}
}

const benchPeersAbout = `Measures serial call latency and concurrent throughput of toolrag bridge
and toolrag serve against the peer gateways (supergateway, mcp-proxy,
server-everything's HTTP mode), in interleaved rounds, with each target's
whole process tree's CPU and memory.

Reads:  --toolrag: the toolrag binary to measure (make build writes
        bin/toolrag); --tools: where scripts/peers.sh installed the peers.
Writes: the report table on stdout, progress on stderr.

Example (what make bench-peers runs):
  toolrag-lab bench-peers --toolrag bin/toolrag --tools .tools/peers`
