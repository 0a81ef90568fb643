package testenv

import (
	"os"
	"path/filepath"
	"testing"
)

// LocalGatewayEnv writes registry and keys as registry.yaml and keys.yaml
// into a new temporary configuration directory and returns the
// environment of a local gateway on it (for its Getenv): the directory,
// its catalog database in it, health checks off, and vars over those.
func LocalGatewayEnv(t testing.TB, registry, keys string, vars map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{"registry.yaml": registry, "keys.yaml": keys} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := map[string]string{
		"MCP_GATEWAY_CONFIG_DIR":        dir,
		"TOOL_RAG_DB":                   filepath.Join(dir, "tools.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL": "0",
	}
	for k, v := range vars {
		env[k] = v
	}
	return env
}
