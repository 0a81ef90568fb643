package subcommand

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"testing"
)

func TestSetRun(t *testing.T) {
	s := &Set{Program: "prog", Intro: "What prog is.", Footer: "run `prog <command> -h`"}
	s.Add("hello", Command{Summary: "say hello", About: "Says hello.\n\nExample:\n  prog hello --name x", Flags: func(fs *flag.FlagSet) Run {
		name := fs.String("name", "world", "who to greet")
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			_, err := io.WriteString(stdout, "hello "+*name)
			return err
		}
	}})
	s.Add("bye", Command{Summary: "say bye", Run: func(context.Context, []string, io.Writer, io.Writer) error { return nil }})
	tests := []struct {
		args              []string
		wantErr           string // "" for none
		helpErr           bool   // flag.ErrHelp
		wantOut, wantErrw []string
	}{
		{args: nil, wantErr: "missing command", wantErrw: []string{"usage: prog <command> [flags]", "What prog is.", "  bye ", "  hello        say hello", "run `prog <command> -h`"}},
		{args: []string{"-h"}, wantErrw: []string{"commands:"}},
		{args: []string{"nope"}, wantErr: `unknown command "nope"`, wantErrw: []string{"hello"}},
		{args: []string{"hello", "--name", "you"}, wantOut: []string{"hello you"}},
		{args: []string{"hello", "-h"}, helpErr: true, wantErrw: []string{"usage: prog hello [flags]\n\nSays hello.\n\nExample:\n  prog hello --name x\n\nflags:\n", "-name"}},
	}
	for _, tt := range tests {
		var out, errw bytes.Buffer
		err := s.Run(context.Background(), tt.args, &out, &errw)
		switch {
		case tt.helpErr:
			if !errors.Is(err, flag.ErrHelp) {
				t.Errorf("%v: err %v, want flag.ErrHelp", tt.args, err)
			}
		case tt.wantErr == "" && err != nil, tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)):
			t.Errorf("%v: err %v, want %q", tt.args, err, tt.wantErr)
		}
		for _, w := range tt.wantOut {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: stdout %q lacks %q", tt.args, out.String(), w)
			}
		}
		for _, w := range tt.wantErrw {
			if !strings.Contains(errw.String(), w) {
				t.Errorf("%v: stderr %q lacks %q", tt.args, errw.String(), w)
			}
		}
	}
	if got := strings.Join(s.Names(), ","); got != "bye,hello" {
		t.Errorf("Names() = %s", got)
	}
}

// TestWithFlags: the flags are parsed before the command's work, which
// sees the positional arguments left; a bad flag is an error (exit 1) and
// -h is flag.ErrHelp (exit 0), both with the usage on stderr and nothing
// on stdout; a command without flags has no "flags:" section.
func TestWithFlags(t *testing.T) {
	const about = "\nGreets someone.\n\nExample:\n  prog greet --name x a b\n"
	greet := func(fs *flag.FlagSet) Run {
		name := fs.String("name", "world", "who to greet")
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			_, err := fmt.Fprintf(stdout, "hello %s %q", *name, fs.Args())
			return err
		}
	}
	none := func(fs *flag.FlagSet) Run {
		return func(ctx context.Context, stdout, stderr io.Writer) error {
			_, err := fmt.Fprintf(stdout, "args %q", fs.Args())
			return err
		}
	}
	const greetUsage = "usage: prog greet --name N [args]\n\nGreets someone.\n\nExample:\n  prog greet --name x a b\n\nflags:\n  -name string\n    \twho to greet (default \"world\")\n"
	tests := []struct {
		name             string
		flags            Flags
		args             []string
		wantOut, wantErr string // exact stdout; stderr
		wantErrIs        error
		wantErrText      string // in the error
		wantCode         int
	}{
		{name: "flags then positional", flags: greet, args: []string{"--name", "you", "a", "-b"}, wantOut: `hello you ["a" "-b"]`},
		{name: "after --", flags: greet, args: []string{"--", "--name", "x"}, wantOut: `hello world ["--name" "x"]`},
		{name: "no args", flags: greet, wantOut: `hello world []`},
		{name: "-h", flags: greet, args: []string{"-h"}, wantErr: greetUsage, wantErrIs: flag.ErrHelp},
		{name: "--help", flags: greet, args: []string{"--help", "a"}, wantErr: greetUsage, wantErrIs: flag.ErrHelp},
		{name: "bad flag", flags: greet, args: []string{"--nope"}, wantErr: "flag provided but not defined: -nope\n" + greetUsage,
			wantErrText: "flag provided but not defined: -nope", wantCode: 1},
		{name: "bad value", flags: greet, args: []string{"--name"}, wantErr: "flag needs an argument: -name\n" + greetUsage,
			wantErrText: "flag needs an argument: -name", wantCode: 1},
		{name: "no flags: positional", flags: none, args: []string{"x", "y"}, wantOut: `args ["x" "y"]`},
		{name: "no flags: -h", flags: none, args: []string{"-h"}, wantErr: "usage: prog greet --name N [args]\n\nGreets someone.\n\nExample:\n  prog greet --name x a b\n", wantErrIs: flag.ErrHelp},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errw bytes.Buffer
			err := WithFlags("greet", "prog greet --name N [args]", about, tt.flags)(context.Background(), tt.args, &out, &errw)
			switch {
			case tt.wantErrIs != nil:
				if !errors.Is(err, tt.wantErrIs) {
					t.Errorf("err %v, want %v", err, tt.wantErrIs)
				}
			case tt.wantErrText != "":
				if err == nil || err.Error() != tt.wantErrText {
					t.Errorf("err %v, want %q", err, tt.wantErrText)
				}
			case err != nil:
				t.Errorf("err %v", err)
			}
			if out.String() != tt.wantOut {
				t.Errorf("stdout %q, want %q", out.String(), tt.wantOut)
			}
			if errw.String() != tt.wantErr {
				t.Errorf("stderr:\n%s\nwant:\n%s", errw.String(), tt.wantErr)
			}
			s := &Set{Program: "prog"}
			var status bytes.Buffer
			if code := s.ExitCode(err, &status); code != tt.wantCode {
				t.Errorf("exit code %d, want %d", code, tt.wantCode)
			}
		})
	}
}

func TestExitCode(t *testing.T) {
	s := &Set{Program: "prog"}
	for _, tt := range []struct {
		err     error
		code    int
		printed string
	}{
		{nil, 0, ""},
		{flag.ErrHelp, 0, ""},
		{fmt.Errorf("keys: %w", flag.ErrHelp), 0, ""},
		{errors.New(`unknown command "x"`), 1, "prog: unknown command \"x\"\n"},
	} {
		var w bytes.Buffer
		if code := s.ExitCode(tt.err, &w); code != tt.code || w.String() != tt.printed {
			t.Errorf("ExitCode(%v) = %d, printed %q; want %d, %q", tt.err, code, w.String(), tt.code, tt.printed)
		}
	}
}
