package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// TestEveryCommandHelp: `toolrag <command> -h` (and --help) prints usage
// and is not an error (main exits 0 on flag.ErrHelp), for every command,
// including those with subcommands.
func TestEveryCommandHelp(t *testing.T) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) < 10 {
		t.Fatalf("only %d commands registered", len(names))
	}
	for _, n := range names {
		for _, h := range []string{"-h", "--help"} {
			t.Run(n+" "+h, func(t *testing.T) {
				var out, errb bytes.Buffer
				err := run(context.Background(), []string{n, h}, &out, &errb)
				if err != nil && !errors.Is(err, flag.ErrHelp) {
					t.Fatalf("error %v (exit status 1)", err)
				}
				if !strings.Contains(strings.ToLower(errb.String()+out.String()), "usage") {
					t.Errorf("no usage printed: %q", errb.String()+out.String())
				}
			})
		}
	}
	for _, sub := range [][]string{{"keys", "create", "-h"}, {"registry", "push", "-h"}, {"dynamo", "create-tables", "-h"}} {
		var out, errb bytes.Buffer
		if err := run(context.Background(), sub, &out, &errb); err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%v: %v", sub, err)
		}
	}
	var errb bytes.Buffer
	if err := run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &errb); err != nil || !strings.Contains(errb.String(), "serve") {
		t.Errorf("toolrag -h: %v %q", err, errb.String())
	}
}

// TestServeHelpListsEnv: `toolrag serve -h` names every environment
// variable the local gateway's packages read.
func TestServeHelpListsEnv(t *testing.T) {
	var errb bytes.Buffer
	if err := run(context.Background(), []string{"serve", "-h"}, &bytes.Buffer{}, &errb); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("serve -h: %v", err)
	}
	help := errb.String()
	re := regexp.MustCompile(`"((?:MCP_GATEWAY|TOOL_RAG|TOOLRAG_LOG)_[A-Z0-9_]+)"`)
	seen := map[string]bool{}
	for _, dir := range []string{"config", "local", "embed", "rerank", "planner"} {
		files, _ := filepath.Glob(filepath.Join("..", "..", "pkg", dir, "*.go"))
		for _, f := range files {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range re.FindAllStringSubmatch(string(b), -1) {
				seen[m[1]] = true
			}
		}
	}
	if len(seen) < 30 {
		t.Fatalf("found only %d variables in the sources", len(seen))
	}
	for v := range seen {
		if !strings.Contains(help, v) {
			t.Errorf("serve -h does not list %s", v)
		}
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
		err := run(context.Background(), c.args, &bytes.Buffer{}, &bytes.Buffer{})
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
	if err := run(context.Background(), []string{"eval", "--source", "direct", "--dataset", dir}, &out, &errb); err != nil {
		t.Fatalf("%v\n%s", err, errb.String())
	}
	if !strings.Contains(errb.String(), "eval: ") || !strings.Contains(errb.String(), "loading 2 tools") {
		t.Errorf("no progress on stderr: %q", errb.String())
	}
	if out.Len() == 0 {
		t.Error("no report on stdout")
	}
}
