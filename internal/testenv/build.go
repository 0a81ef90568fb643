package testenv

import (
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sync"
	"testing"
)

var (
	buildMu  sync.Mutex
	buildDir string
	builds   = map[string]*built{}
)

type built struct {
	once sync.Once
	path string
	err  error
}

// GoBinary builds a main package of this module once per test binary and
// returns the executable's path. pkg is relative to the repository root
// ("./servers/echo") or a full import path. Tests that use testenv.Main
// get the binaries removed at exit.
func GoBinary(t testing.TB, pkg string) string {
	t.Helper()
	p, err := BuildGoBinary(Root(t), pkg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BuildGoBinary is GoBinary for TestMain functions (no testing.TB yet):
// root is the repository root.
func BuildGoBinary(root, pkg string) (string, error) {
	buildMu.Lock()
	if buildDir == "" {
		dir, err := os.MkdirTemp("", "toolrag-testbin-")
		if err != nil {
			buildMu.Unlock()
			return "", err
		}
		buildDir = dir
		registerAtExit(func() { os.RemoveAll(dir) })
	}
	b, ok := builds[pkg]
	if !ok {
		b = &built{}
		builds[pkg] = b
	}
	dir := buildDir
	buildMu.Unlock()
	b.once.Do(func() {
		b.path = filepath.Join(dir, fmt.Sprintf("%s-%d", path.Base(pkg), len(pkg)))
		cmd := exec.Command("go", "build", "-o", b.path, pkg)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			b.err = fmt.Errorf("build %s: %v\n%s", pkg, err, out)
		}
	})
	return b.path, b.err
}
