// Command toolrag-lab runs the offline work behind the gateway: training
// and distilling the builtin embedding model, measuring retrieval quality,
// load tests and benchmarks against peer gateways. It links lab/, which the
// shipped binaries (cmd/toolrag, functions/*) never do (internal/guard
// checks it).
package main

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
)

var commands = subcommand.Set{
	Program: "toolrag-lab",
	Intro:   "The gateway's offline work (the model, evaluations, load tests); the gateway itself is `toolrag`.",
	Footer:  "run `toolrag-lab <command> -h` for what a command reads and writes, an example and its flags",
}

func init() {
	for _, c := range []struct {
		name, summary, about string
		flags                subcommand.Flags
	}{
		{"bench-peers", "benchmark bridge and serve against supergateway, mcp-proxy and server-everything's HTTP mode (make bench-peers)", benchPeersAbout, benchPeersFlags},
		{"distill", "distil a sentence encoder's vectors into a static table (make distilled; an experiment)", distillAbout, distillFlags},
		{"eval", "measure retrieval quality on a tools.jsonl + queries.jsonl folder (make eval)", evalAbout, evalFlags},
		{"loadtest", "load-test a local gateway with in-process upstreams and concurrent MCP clients (make loadtest)", loadtestAbout, loadtestFlags},
		{"train", "train the builtin tool-retrieval embedding model from (query, tool) pairs (make model)", trainAbout, trainFlags},
	} {
		commands.Add(c.name, subcommand.Command{Summary: c.summary, About: c.about, Flags: c.flags})
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := subcommand.CPUProfile("toolrag-lab")
	err := commands.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	if code := commands.ExitCode(err, os.Stderr); code != 0 {
		os.Exit(code)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
