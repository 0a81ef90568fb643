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
	commands.Add("bench-peers", subcommand.Command{Summary: "benchmark bridge and serve against supergateway, mcp-proxy and server-everything's HTTP mode (make bench-peers)", About: benchPeersAbout, Run: runBenchPeers})
	commands.Add("distill", subcommand.Command{Summary: "distil a sentence encoder's vectors into a static table (make distilled; an experiment)", About: distillAbout, Run: runDistill})
	commands.Add("eval", subcommand.Command{Summary: "measure retrieval quality on a tools.jsonl + queries.jsonl folder (make eval)", About: evalAbout, Run: runEval})
	commands.Add("loadtest", subcommand.Command{Summary: "load-test a local gateway with in-process upstreams and concurrent MCP clients (make loadtest)", About: loadtestAbout, Run: runLoadtest})
	commands.Add("train", subcommand.Command{Summary: "train the builtin tool-retrieval embedding model from (query, tool) pairs (make model)", About: trainAbout, Run: runTrain})
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
