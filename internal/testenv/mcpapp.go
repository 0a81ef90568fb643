package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// The MCP Apps test server (mcpapp.mjs): a weather app built on npm
// @modelcontextprotocol/ext-apps, with a UI resource, an app-only tool and
// a tool reporting the MCP Apps capability its client declared.

// MCPAppStdio returns the registry entry of the MCP Apps server over
// stdio under id (indented for the servers: map of registry.yaml).
func MCPAppStdio(t testing.TB, id string) string {
	t.Helper()
	node, script, mods := mcpApp(t)
	return fmt.Sprintf("  %s:\n    transport: stdio\n    command: %q\n    args: [%q, stdio]\n    env: {TOOLRAG_NPM_MODULES: %q}\n", id, node, script, mods)
}

// StartMCPAppHTTP runs the MCP Apps server over Streamable HTTP until the
// test ends and returns its MCP URL.
func StartMCPAppHTTP(t testing.TB) string {
	t.Helper()
	node, script, mods := mcpApp(t)
	cmd := exec.Command(node, script, "http")
	cmd.Env = append(os.Environ(), "TOOLRAG_NPM_MODULES="+mods)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start the MCP Apps server: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		if sc.Scan() {
			line <- sc.Text()
		}
		close(line)
	}()
	select {
	case l, ok := <-line:
		var out struct {
			URL string `json:"url"`
		}
		if !ok || json.Unmarshal([]byte(l), &out) != nil || out.URL == "" {
			t.Fatalf("the MCP Apps server did not start: %q %s", l, stderr.String())
		}
		return out.URL
	case <-time.After(60 * time.Second):
		t.Fatalf("the MCP Apps server did not start within 60 s: %s", stderr.String())
	}
	return ""
}

func mcpApp(t testing.TB) (node, script, mods string) {
	t.Helper()
	NPMModule(t, "@modelcontextprotocol/ext-apps")
	NPMModule(t, "@modelcontextprotocol/server")
	return Node22(t), filepath.Join(Root(t), "internal", "testenv", "mcpapp.mjs"), filepath.Join(ToolsDir(t), "npm", "node_modules")
}
