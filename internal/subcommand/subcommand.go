// Package subcommand runs a program made of named commands (toolrag,
// toolrag-lab): the command list, dispatch, a command's -h, and a CPU
// profile of the whole run.
package subcommand

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/pprof"
	"sort"
	"strconv"
	"strings"
)

// Func runs a command with the arguments after its name.
type Func func(ctx context.Context, args []string, stdout, stderr io.Writer) error

// Command is one command: a one-line summary for the command list and,
// optionally, a longer text for its -h (what it does, what it reads and
// writes, an example; see Set.Flags).
type Command struct {
	Summary, About string
	Run            Func
}

// Set is a program's commands.
type Set struct {
	// Program is the program's name ("toolrag").
	Program string
	// Intro is printed after the usage line of the command list.
	Intro string
	// Footer ends the command list.
	Footer string

	commands map[string]Command
}

// Add registers a command under name.
func (s *Set) Add(name string, c Command) {
	if s.commands == nil {
		s.commands = map[string]Command{}
	}
	s.commands[name] = c
}

// Names returns the commands' names, sorted.
func (s *Set) Names() []string {
	names := make([]string, 0, len(s.commands))
	for n := range s.commands {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Run runs the command args[0] names; without one, or with -h, it prints
// the command list.
func (s *Set) Run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		s.usage(stderr)
		if len(args) == 0 {
			return errors.New("missing command")
		}
		return nil
	}
	cmd, ok := s.commands[args[0]]
	if !ok {
		s.usage(stderr)
		return fmt.Errorf("unknown command %q", args[0])
	}
	return cmd.Run(ctx, args[1:], stdout, stderr)
}

func (s *Set) usage(w io.Writer) {
	fmt.Fprintf(w, "usage: %s <command> [flags]\n\n", s.Program)
	if s.Intro != "" {
		fmt.Fprintf(w, "%s\n\n", s.Intro)
	}
	fmt.Fprintln(w, "commands:")
	for _, n := range s.Names() {
		fmt.Fprintf(w, "  %-12s %s\n", n, s.commands[n].Summary)
	}
	fmt.Fprintf(w, "\n%s\n", s.Footer)
}

// Flags returns the flag set of command name, whose -h prints the
// command's About text before its flags.
func (s *Set) Flags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s %s [flags]\n\n%s\n\nflags:\n", s.Program, name, strings.TrimSpace(s.commands[name].About))
		fs.PrintDefaults()
	}
	return fs
}

// CPUProfile writes a CPU profile of the whole run to the file named by
// TOOLRAG_CPUPROFILE, if set (for `go tool pprof`; a server writes it when
// it stops on SIGTERM); "%p" in the name becomes the process id, for a
// command that runs others (bench-peers). It returns the function that
// stops it; program names it in a failure.
func CPUProfile(program string) func() {
	path := os.Getenv("TOOLRAG_CPUPROFILE")
	if path == "" {
		return func() {}
	}
	f, err := os.Create(strings.ReplaceAll(path, "%p", strconv.Itoa(os.Getpid())))
	if err != nil {
		fmt.Fprintln(os.Stderr, program+": TOOLRAG_CPUPROFILE:", err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintln(os.Stderr, program+": TOOLRAG_CPUPROFILE:", err)
		f.Close()
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
