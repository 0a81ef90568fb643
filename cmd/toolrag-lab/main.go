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
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
	"syscall"
)

// command is one subcommand: a one-line summary for the command list, and
// a longer text for its -h (what it does, what it reads and writes, an
// example).
type command struct {
	summary, about string
	run            func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{}

func register(name, summary, about string, run func(ctx context.Context, args []string, stdout, stderr io.Writer) error) {
	commands[name] = command{summary: summary, about: about, run: run}
}

// flags returns the flag set of a subcommand whose -h prints the command's
// about text before its flags.
func flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: toolrag-lab %s [flags]\n\n%s\n\nflags:\n", name, strings.TrimSpace(commands[name].about))
		fs.PrintDefaults()
	}
	return fs
}

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	stopProfile := cpuProfile()
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stopProfile()
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintln(os.Stderr, "toolrag-lab:", err)
		os.Exit(1)
	}
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
	fmt.Fprintln(w, "usage: toolrag-lab <command> [flags]\n\nThe gateway's offline work (the model, evaluations, load tests); the gateway itself is `toolrag`.\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nrun `toolrag-lab <command> -h` for what a command reads and writes, an example and its flags")
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// cpuProfile writes a CPU profile of the whole run to the file named by
// TOOLRAG_CPUPROFILE, if set; "%p" in the name becomes the process id. It
// returns the function that stops it.
func cpuProfile() func() {
	path := os.Getenv("TOOLRAG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, "toolrag-lab: TOOLRAG_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, "toolrag-lab: TOOLRAG_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
