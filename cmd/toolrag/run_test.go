package main

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestMakeRunCtrlC runs the gateway the way `make run` does — from make,
// on a terminal — and presses Ctrl-C once it is ready: it printed the URL,
// the example keys and what to try next, it logs a clean shutdown, and
// make exits 0 without reporting "Interrupt".
func TestMakeRunCtrlC(t *testing.T) {
	for _, p := range []string{"make", "python3"} {
		if _, err := exec.LookPath(p); err != nil {
			testenv.Missing(t, p)
		}
	}
	bin := testenv.GoBinary(t, "./cmd/toolrag")
	dir := t.TempDir()
	keys, err := os.ReadFile(filepath.Join(testenv.Root(t), "config", "keys.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	reg := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", testenv.GoBinary(t, "./servers/echo"))
	for name, data := range map[string]string{"keys.yaml": string(keys), "registry.yaml": reg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The serve line of the Makefile's run target, with this binary.
	mk, err := os.ReadFile(filepath.Join(testenv.Root(t), "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var serveLine string
	for _, l := range strings.Split(string(mk), "\n") {
		if strings.Contains(l, "bin/toolrag serve") {
			serveLine = strings.Replace(l, "bin/toolrag", bin, 1)
		}
	}
	if serveLine == "" || !strings.Contains(serveLine, "TOOLRAG_FOREGROUND=1") {
		t.Fatalf("no serve line with TOOLRAG_FOREGROUND=1 in the Makefile")
	}
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte("run:\n"+serveLine+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command("python3", filepath.Join("testdata", "ptyrun.py"), "make", "--no-print-directory", "-C", dir, "run")
	cmd.Env = append(os.Environ(), "READY_MARK=stop: Ctrl-C", "MCP_GATEWAY_CONFIG_DIR="+dir,
		"MCP_GATEWAY_HOST=127.0.0.1", fmt.Sprintf("MCP_GATEWAY_PORT=%d", port), "TOOL_RAG_DB="+filepath.Join(dir, "t.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL=0")
	out, err := cmd.CombinedOutput()
	s := string(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, s)
	}
	for _, want := range []string{
		"toolrag gateway ready", fmt.Sprintf("http://127.0.0.1:%d/mcp", port), fmt.Sprintf("http://127.0.0.1:%d/console/", port), "dev-key-full-access", "next: curl",
		"gateway stopped cleanly", "CTRL-C-SENT=True EXIT=0",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("output lacks %q:\n%s", want, s)
		}
	}
	for _, bad := range []string{"Interrupt", "make: ***", "Error"} {
		if strings.Contains(s, bad) {
			t.Errorf("output has %q:\n%s", bad, s)
		}
	}
}
