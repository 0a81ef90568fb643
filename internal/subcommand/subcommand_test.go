package subcommand

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

func TestSetRun(t *testing.T) {
	s := &Set{Program: "prog", Intro: "What prog is.", Footer: "run `prog <command> -h`"}
	s.Add("hello", Command{Summary: "say hello", About: "Says hello.\n\nExample:\n  prog hello --name x", Run: func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := s.Flags("hello", stderr)
		name := fs.String("name", "world", "who to greet")
		if err := fs.Parse(args); err != nil {
			return err
		}
		_, err := io.WriteString(stdout, "hello "+*name)
		return err
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
		{args: []string{"hello", "-h"}, helpErr: true, wantErrw: []string{"usage: prog hello [flags]", "Says hello.", "flags:", "-name"}},
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
