package guard

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/toolrag/mcp-gateway"

// shipped are the binaries that are deployed or handed to users: the CLI
// (`toolrag serve`, `bridge`, ...) and the Lambda functions. The lab's own
// command, cmd/toolrag-lab, is the one main package allowed to link lab/.
var shipped = []string{"./cmd/toolrag", "./functions/gateway", "./functions/sync", "./functions/health"}

// goList runs `go list` at the module root with args and decodes the JSON
// package records it prints.
func goList(t *testing.T, env []string, args ...string) []pkgInfo {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Name,Doc,GoFiles,Deps"}, args...)...)
	cmd.Dir = root
	cmd.Env = append(cmd.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []pkgInfo
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkgInfo
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

type pkgInfo struct {
	ImportPath, Name, Doc string
	GoFiles, Deps         []string
}

// labDeps returns the lab packages among a package's dependencies.
func labDeps(p pkgInfo) []string {
	var out []string
	for _, d := range append([]string{p.ImportPath}, p.Deps...) {
		if d == module+"/lab" || strings.HasPrefix(d, module+"/lab/") {
			out = append(out, d)
		}
	}
	return out
}

// TestShippedBinariesDoNotLinkLab: no function binary and not the toolrag
// CLI links a package under lab/, on the platforms and with the build tags
// they are built with (make build, make build-lambdas). The lab's command
// does link it, which shows the check can see a lab dependency.
func TestShippedBinariesDoNotLinkLab(t *testing.T) {
	builds := []struct {
		name string
		env  []string
		tags string
	}{
		{"host", nil, ""},
		{"lambda", []string{"GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=0"}, "lambda.norpc"},
	}
	for _, b := range builds {
		t.Run(b.name, func(t *testing.T) {
			args := append([]string{"-tags=" + b.tags}, shipped...)
			pkgs := goList(t, b.env, args...)
			if len(pkgs) != len(shipped) {
				t.Fatalf("go list returned %d packages for %d binaries", len(pkgs), len(shipped))
			}
			for _, p := range pkgs {
				if p.Name != "main" {
					t.Errorf("%s is not a main package", p.ImportPath)
				}
				if l := labDeps(p); len(l) > 0 {
					t.Errorf("%s links the lab: %s (move what it needs out of lab/, or the code that needs it into cmd/toolrag-lab)", p.ImportPath, strings.Join(l, ", "))
				}
			}
			lab := goList(t, b.env, "-tags="+b.tags, "./cmd/toolrag-lab")
			if len(lab) != 1 || len(labDeps(lab[0])) == 0 {
				t.Errorf("cmd/toolrag-lab shows no lab dependency: the check cannot see one")
			}
		})
	}
}

// TestEveryMainPackageIsKnown: a new main package outside lab/ is either
// shipped (and then checked above) or named here as a test or dev tool.
func TestEveryMainPackageIsKnown(t *testing.T) {
	known := map[string]bool{
		module + "/cmd/toolrag-lab":              true, // the lab's command
		module + "/internal/conformance/fixture": true, // a test fixture server
		module + "/servers/echo":                 true, // the test and load-test upstream
	}
	for _, s := range shipped {
		known[module+"/"+strings.TrimPrefix(s, "./")] = true
	}
	for _, p := range goList(t, nil, "./...") {
		if p.Name != "main" || len(labDeps(pkgInfo{ImportPath: p.ImportPath})) > 0 {
			continue
		}
		if !known[p.ImportPath] {
			t.Errorf("main package %s: add it to shipped (it is deployed or run by users) or to known (a test or dev tool)", p.ImportPath)
		}
	}
}

// TestEveryPackageHasDoc: every package with Go files has a doc comment
// ("Package x ..." or "Command x ..."), what a newcomer reads first.
func TestEveryPackageHasDoc(t *testing.T) {
	n := 0
	for _, p := range goList(t, nil, "./...") {
		if len(p.GoFiles) == 0 {
			continue // only test files
		}
		n++
		if strings.TrimSpace(p.Doc) == "" {
			t.Errorf("%s has no package doc comment", p.ImportPath)
		}
	}
	if n < 20 {
		t.Fatalf("only %d packages listed", n)
	}
}
