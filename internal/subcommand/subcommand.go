// Package subcommand runs a program made of named commands (toolrag,
// toolrag-lab): the command list, dispatch, a command's flags and -h, the
// exit status, and a CPU profile of the whole run.
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

// Run is a command's work once its flags are parsed; the arguments left
// after the flags are the flag set's Args.
type Run func(ctx context.Context, stdout, stderr io.Writer) error

// Flags declares a command's flags on fs and returns its work.
type Flags func(fs *flag.FlagSet) Run

// Command is one command: a one-line summary for the command list and
// either Flags or, for a command that parses its arguments itself, Run.
type Command struct {
	Summary string
	// Usage is the command line its -h starts with, after "usage: "
	// (default "<program> <name> [flags]").
	Usage string
	// About is the longer text of its -h: what it does, what it reads and
	// writes, an example.
	About string
	Flags Flags
	Run   Func
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

// Add registers a command under name; a command with Flags runs through
// WithFlags.
func (s *Set) Add(name string, c Command) {
	if s.commands == nil {
		s.commands = map[string]Command{}
	}
	if c.Flags != nil {
		if c.Usage == "" {
			c.Usage = s.Program + " " + name + " [flags]"
		}
		c.Run = WithFlags(name, c.Usage, c.About, c.Flags)
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

// ExitCode is the exit status of a run that ended with err: 0 without an
// error or after a -h (flag.ErrHelp), otherwise 1 once err is printed on
// stderr after the program's name.
func (s *Set) ExitCode(err error, stderr io.Writer) int {
	if err == nil || errors.Is(err, flag.ErrHelp) {
		return 0
	}
	fmt.Fprintln(stderr, s.Program+":", err)
	return 1
}

// WithFlags makes the Func of the command name whose flags declares its
// flags: they are parsed from the command's arguments before its work
// runs. A bad flag is the error, after the usage; -h prints the usage and
// returns flag.ErrHelp. The usage (on stderr) is "usage: " line, about,
// then the flags, if it has any.
func WithFlags(name, line, about string, flags Flags) Func {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		fs.SetOutput(stderr)
		fs.Usage = func() {
			fmt.Fprintf(stderr, "usage: %s\n\n%s\n", line, strings.TrimSpace(about))
			n := 0
			fs.VisitAll(func(*flag.Flag) { n++ })
			if n > 0 {
				fmt.Fprintln(stderr, "\nflags:")
				fs.PrintDefaults()
			}
		}
		run := flags(fs)
		if err := fs.Parse(args); err != nil {
			return err
		}
		return run(ctx, stdout, stderr)
	}
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
