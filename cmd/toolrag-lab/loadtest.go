package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/lab/loadtest"
)

func loadtestFlags(fs *flag.FlagSet) subcommand.Run {
	var cfg loadtest.Config
	fs.IntVar(&cfg.Upstreams, "upstreams", 50, "in-process Streamable HTTP upstreams the benchmark catalog is split over")
	fs.IntVar(&cfg.Stdio, "stdio", 3, "stdio upstreams running servers/echo")
	fs.IntVar(&cfg.Clients, "clients", 200, "concurrent MCP clients")
	fs.DurationVar(&cfg.Duration, "duration", loadtestDefaultDuration, "how long the clients run")
	fs.IntVar(&cfg.MaxOpsPerClient, "max-ops", 1_000_000, "upper bound on each client's operations")
	fs.IntVar(&cfg.MaxTools, "max-tools", 0, "use only the first N catalog tools (0 = all)")
	bench := fs.String("bench", filepath.Join("..", "shared", "bench"), "benchmark folder: holds livemcpbench/ and stabletoolbench/, or a tools.jsonl")
	echo := fs.String("echo", "", "servers/echo binary for the stdio upstreams (default: go build ./servers/echo)")
	asJSON := fs.Bool("json", false, "print the report as JSON")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		cfg.Progress = stderr
		dirs, err := benchDirs(*bench)
		if err != nil {
			return err
		}
		cfg.BenchDirs = dirs
		if cfg.Stdio > 0 {
			bin := *echo
			if bin == "" {
				tmp, err := os.MkdirTemp("", "toolrag-loadtest-echo")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				bin = filepath.Join(tmp, "echo")
				build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./servers/echo")
				if out, err := build.CombinedOutput(); err != nil {
					return fmt.Errorf("build servers/echo for the stdio upstreams: %v\n%s(run from the repository root, pass --echo PATH, or use --stdio 0)", err, out)
				}
			}
			cfg.EchoCommand = []string{bin}
		}
		rep, err := loadtest.Run(ctx, cfg)
		if err != nil {
			return err
		}
		if *asJSON {
			return printJSON(stdout, rep)
		}
		rep.WriteTable(stdout)
		if rep.Total.Errors > 0 {
			return fmt.Errorf("%d operations failed", rep.Total.Errors)
		}
		return nil
	}
}

const loadtestDefaultDuration = 60 * time.Second

// benchDirs resolves --bench: a folder with tools.jsonl, or one holding
// the livemcpbench and stabletoolbench sets.
func benchDirs(dir string) ([]string, error) {
	if _, err := os.Stat(filepath.Join(dir, "tools.jsonl")); err == nil {
		return []string{dir}, nil
	}
	var out []string
	for _, set := range []string{"livemcpbench", "stabletoolbench"} {
		if _, err := os.Stat(filepath.Join(dir, set, "tools.jsonl")); err == nil {
			out = append(out, filepath.Join(dir, set))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no benchmark catalog in %s: pass --bench with a folder holding tools.jsonl, or livemcpbench/ and stabletoolbench/", dir)
	}
	return out, nil
}

const loadtestAbout = `Starts a gateway in-process over a benchmark catalog split across many
in-process Streamable HTTP upstreams and a few stdio servers/echo, drives it
with concurrent MCP clients, and reports throughput, latency and memory.

Reads:  --bench: a folder with tools.jsonl, or one holding livemcpbench/ and
        stabletoolbench/ (../shared/bench); builds servers/echo unless --echo.
Writes: the report on stdout (a table, or JSON with --json), progress on
        stderr; listens on 127.0.0.1 only.

Example (what make loadtest runs):
  toolrag-lab loadtest --upstreams 50 --stdio 3 --clients 200 --duration 60s`
