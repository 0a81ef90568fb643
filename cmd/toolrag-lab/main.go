// Command toolrag-lab runs the offline work behind the gateway: training
// and distilling the builtin embedding model, measuring retrieval quality,
// load tests and benchmarks against peer gateways. It links lab/, which the
// shipped binaries (cmd/toolrag, functions/*) never do (internal/guard
// checks it).
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
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
		flags                func(fs *flag.FlagSet) run
	}{
		{"bench-peers", "benchmark bridge and serve against supergateway, mcp-proxy and server-everything's HTTP mode (make bench-peers)", benchPeersAbout, benchPeersFlags},
		{"distill", "distil a sentence encoder's vectors into a static table (make distilled; an experiment)", distillAbout, distillFlags},
		{"eval", "measure retrieval quality on a tools.jsonl + queries.jsonl folder (make eval)", evalAbout, evalFlags},
		{"loadtest", "load-test a local gateway with in-process upstreams and concurrent MCP clients (make loadtest)", loadtestAbout, loadtestFlags},
		{"train", "train the builtin tool-retrieval embedding model from (query, tool) pairs (make model)", trainAbout, trainFlags},
	} {
		commands.Add(c.name, subcommand.Command{Summary: c.summary, About: c.about, Run: withFlags(c.name, c.flags)})
	}
}

// run is a command's work once its flags are parsed.
type run func(ctx context.Context, stdout, stderr io.Writer) error

// withFlags makes the command name of flags, which declares the command's
// flags on fs and returns its run: the flags are parsed from the
// command's arguments (-h prints its About text and flags) before run.
func withFlags(name string, flags func(fs *flag.FlagSet) run) subcommand.Func {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := commands.Flags(name, stderr)
		run := flags(fs)
		if err := fs.Parse(args); err != nil {
			return err
		}
		return run(ctx, stdout, stderr)
	}
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := subcommand.CPUProfile("toolrag-lab")
	err := commands.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "toolrag-lab:", err)
		os.Exit(1)
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
