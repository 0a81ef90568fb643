package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestEveryCommandHelp: `toolrag <command> -h` (and --help) prints usage
// and is not an error (main exits 0 on flag.ErrHelp), for every command,
// including those with subcommands.
func TestEveryCommandHelp(t *testing.T) {
	names := commands.Names()
	if len(names) < 8 {
		t.Fatalf("only %d commands registered", len(names))
	}
	for _, n := range names {
		for _, h := range []string{"-h", "--help"} {
			t.Run(n+" "+h, func(t *testing.T) {
				var out, errb bytes.Buffer
				err := commands.Run(context.Background(), []string{n, h}, &out, &errb)
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
		if err := commands.Run(context.Background(), sub, &out, &errb); err != nil && !errors.Is(err, flag.ErrHelp) {
			t.Errorf("%v: %v", sub, err)
		}
	}
	var errb bytes.Buffer
	if err := commands.Run(context.Background(), []string{"-h"}, &bytes.Buffer{}, &errb); err != nil || !strings.Contains(errb.String(), "serve") {
		t.Errorf("toolrag -h: %v %q", err, errb.String())
	}
}

// TestServeHelpListsEnv: `toolrag serve -h` names every environment
// variable the local gateway's packages read.
func TestServeHelpListsEnv(t *testing.T) {
	var errb bytes.Buffer
	if err := commands.Run(context.Background(), []string{"serve", "-h"}, &bytes.Buffer{}, &errb); !errors.Is(err, flag.ErrHelp) {
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

// TestAWSSubcommandErrors: an AWS command without a subcommand, or with
// one it does not have, fails with its usage line and touches no table.
func TestAWSSubcommandErrors(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"keys"}, "missing subcommand; usage: toolrag keys create"},
		{[]string{"keys", "--id", "x"}, "missing subcommand; usage: toolrag keys create"},
		{[]string{"keys", "delete"}, `unknown subcommand "delete"; usage: toolrag keys create`},
		{[]string{"registry", "pull"}, `unknown subcommand "pull"; usage: toolrag registry push`},
		{[]string{"dynamo", "drop-tables"}, `unknown subcommand "drop-tables"; usage: toolrag dynamo create-tables`},
	} {
		err := commands.Run(context.Background(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want it to start with %q", tc.args, err, tc.want)
		}
	}
}
