package testenv

import (
	"fmt"
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
	mcpApp(t)
	var out struct {
		URL string `json:"url"`
	}
	startNode(t, t.Cleanup, "the MCP Apps server", 60*time.Second, &out, "mcpapp.mjs", "http")
	if out.URL == "" {
		t.Fatal("the MCP Apps server did not say its URL")
	}
	return out.URL
}

func mcpApp(t testing.TB) (node, script, mods string) {
	t.Helper()
	NPMModule(t, "@modelcontextprotocol/ext-apps")
	NPMModule(t, "@modelcontextprotocol/server")
	return Node22(t), filepath.Join(Root(t), "internal", "testenv", "mcpapp.mjs"), filepath.Join(ToolsDir(t), "npm", "node_modules")
}
