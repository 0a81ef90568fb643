package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestGoBuildProgress: scripts/gobuild.sh (what make run builds with)
// counts the packages to compile first, numbers each one against that
// total with the elapsed time, and says when it is done; a compile error
// is shown and fails the build.
func TestGoBuildProgress(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		testenv.Missing(t, "bash")
	}
	dir := t.TempDir()
	stamp := fmt.Sprint(time.Now().UnixNano()) // new sources: nothing cached
	files := map[string]string{
		"go.mod":     "module example.com/progress\n\ngo 1.22\n",
		"a/a.go":     "package a\n\nconst Stamp = \"" + stamp + "\"\n",
		"b/b.go":     "package b\n\nimport \"example.com/progress/a\"\n\nfunc B() string { return a.Stamp }\n",
		"cmd/x.go":   "package main\n\nimport (\n\t\"fmt\"\n\n\t\"example.com/progress/b\"\n)\n\nfunc main() { fmt.Println(b.B()) }\n",
		"bad/bad.go": "package main\n\nfunc main() { undefinedThing() }\n",
	}
	for name, src := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	script := filepath.Join(testenv.Root(t), "scripts", "gobuild.sh")
	build := func(pkg string) (string, error) {
		cmd := exec.Command("bash", script, filepath.Join(dir, "out"), pkg)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOWORK=off")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	out, err := build("./cmd")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"build: counting the packages ./cmd needs", "build: compiling 3 of the ", "[  3/3] ", "example.com/progress/a", "built in 0m"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if out, err := build("./cmd"); err != nil || !strings.Contains(out, "is up to date") {
		t.Errorf("second build: %v\n%s", err, out)
	}
	out, err = build("./bad")
	if err == nil || !strings.Contains(out, "undefinedThing") || !strings.Contains(out, "build: failed after") {
		t.Errorf("a compile error: %v\n%s", err, out)
	}
}
