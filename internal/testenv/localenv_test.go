package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

func TestLocalGatewayEnv(t *testing.T) {
	env := LocalGatewayEnv(t, "servers: {}\n", "keys: []\n", map[string]string{"TOOL_RAG_HEALTHCHECK_INTERVAL": "5", "X": "y"})
	dir := env["MCP_GATEWAY_CONFIG_DIR"]
	for name, want := range map[string]string{"registry.yaml": "servers: {}\n", "keys.yaml": "keys: []\n"} {
		if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
	if env["TOOL_RAG_DB"] != filepath.Join(dir, "tools.db") || env["TOOL_RAG_HEALTHCHECK_INTERVAL"] != "5" || env["X"] != "y" {
		t.Errorf("env %v", env)
	}
}
