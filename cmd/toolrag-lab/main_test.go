package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestEveryCommandHelp: `toolrag-lab <command> -h` prints what the command
// does, what it reads and writes, an example and its flags, and is not an
// error (main exits 0 on flag.ErrHelp).
func TestEveryCommandHelp(t *testing.T) {
	want := []string{"bench-peers", "distill", "eval", "loadtest", "train"}
	if got := commands.Names(); !slices.Equal(got, want) {
		t.Errorf("commands %v, want %v", got, want)
	}
	for _, n := range commands.Names() {
		for _, h := range []string{"-h", "--help"} {
			t.Run(n+" "+h, func(t *testing.T) {
				var out, errb bytes.Buffer
				err := commands.Run(context.Background(), []string{n, h}, &out, &errb)
				if err != nil && !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("error %v (exit status 1)", err)
				}
				help := errb.String() + out.String()
				for _, part := range []string{"usage: toolrag-lab " + n, "Reads:", "Writes:", "Example", "toolrag-lab " + n + " --", "flags:"} {
					if !strings.Contains(help, part) {
						t.Errorf("help lacks %q:\n%s", part, help)
					}
				}
			})
		}
	}
	var errb bytes.Buffer
	if err := commands.Run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &errb); err != nil || !strings.Contains(errb.String(), "train") {
		t.Errorf("toolrag-lab -h: %v %q", err, errb.String())
	}
	if err := commands.Run(context.Background(), []string{"nope"}, &bytes.Buffer{}, &bytes.Buffer{}); err == nil || !strings.Contains(err.Error(), `unknown command "nope"`) {
		t.Errorf("unknown command: %v", err)
	}
}

// TestEvalWithoutData: without the benchmark data, eval says what it needs
// and where to put it.
func TestEvalWithoutData(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ args []string }{
		{[]string{"eval", "--dataset", filepath.Join(dir, "nope")}},
		{[]string{"eval", "--dataset", dir}},
		{[]string{"eval"}},
	} {
		err := commands.Run(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.Contains(err.Error(), "tools.jsonl") || !strings.Contains(err.Error(), "../shared/bench/livemcpbench") ||
			strings.Contains(err.Error(), "no such file") {
			t.Errorf("%v: %v", c.args, err)
		}
	}
}

// TestEvalProgress: a run prints progress lines on stderr and the report
// on stdout.
func TestEvalProgress(t *testing.T) {
	dir := t.TempDir()
	tools := `{"id":"a__echo","server":"a","name":"echo","description":"Echo the text back","input_schema":{"type":"object"}}
{"id":"a__add","server":"a","name":"add","description":"Add two numbers","input_schema":{"type":"object"}}
`
	queries := `{"query":"repeat my words","relevant":["a__echo"]}
{"query":"sum of numbers","relevant":["a__add"]}
`
	if err := os.WriteFile(filepath.Join(dir, "tools.jsonl"), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "queries.jsonl"), []byte(queries), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errb bytes.Buffer
	if err := commands.Run(context.Background(), []string{"eval", "--source", "direct", "--dataset", dir}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "eval: ") || !strings.Contains(errb.String(), "loading 2 tools") {
		t.Errorf("no progress on stderr: %q", errb.String())
	}
	if out.Len() == 0 {
		t.Error("no report on stdout")
	}
}
