// Package conformance runs the official MCP conformance suite
// (@modelcontextprotocol/conformance, on Node 22) against the gateway with
// an admin key, fronting the fixture upstream in ./fixture.
package conformance

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func TestConformanceSuite(t *testing.T) {
	node := testenv.Node22(t)
	cli := filepath.Join(testenv.NPMModule(t, "@modelcontextprotocol/conformance"), "dist", "index.js")
	root := testenv.Root(t)
	dir := t.TempDir()

	fixture := filepath.Join(dir, "fixture")
	build := exec.Command("go", "build", "-o", fixture, "./internal/conformance/fixture")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build fixture: %v\n%s", err, out)
	}
	// unprefixed: the suite calls the fixture's tools, prompts and
	// resources by their own names.
	registry := fmt.Sprintf("servers:\n  conf:\n    transport: stdio\n    command: %q\n    unprefixed: true\n", fixture)
	keys := "keys:\n  - id: admin\n    secret: conformance-admin\n    admin: true\n    servers: {conf: {}}\n"
	g := localtest.New(t, localtest.Options{Registry: registry, Keys: keys})
	// The suite has no option for credentials: present the admin key on its
	// behalf, as an authenticating proxy in front of the gateway would.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("Authorization", "Bearer conformance-admin")
		g.Handler.ServeHTTP(w, r)
	}))
	defer srv.Close()

	out := filepath.Join(dir, "results")
	cctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, node, cli, "server", "--url", srv.URL+"/mcp", "-o", out)
	cmd.Env = append(os.Environ(), "PATH="+filepath.Dir(node)+string(os.PathListSeparator)+os.Getenv("PATH"))
	cmd.Dir = dir
	output, runErr := cmd.CombinedOutput()
	passed, failed, byScenario := summarize(t, out)
	t.Logf("conformance checks: %d passed, %d failed", passed, failed)
	var lines []string
	for s, st := range byScenario {
		lines = append(lines, s+": "+st)
	}
	sort.Strings(lines)
	t.Logf("scenarios:\n%s", strings.Join(lines, "\n"))
	if len(byScenario) == 0 {
		t.Fatalf("the conformance suite produced no results (%v):\n%s", runErr, tail(string(output), 4000))
	}
	expected, flaky := baseline(t, filepath.Join(root, "internal", "conformance", "expected-failures.yml"))
	for s, st := range byScenario {
		switch {
		case strings.HasPrefix(st, "FAIL") && !expected[s]:
			t.Errorf("scenario %s fails and is not in expected-failures.yml", s)
		case st == "pass" && expected[s] && !flaky[s]:
			t.Errorf("scenario %s passes now: remove it from expected-failures.yml", s)
		}
	}
	if t.Failed() {
		t.Logf("suite output:\n%s", tail(string(output), 4000))
	}
}

// baseline reads expected-failures.yml: the listed scenarios, and those
// whose comment marks them flaky.
func baseline(t *testing.T, path string) (expected, flaky map[string]bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	expected, flaky = map[string]bool{}, map[string]bool{}
	for _, line := range strings.Split(string(data), "\n") {
		item, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		name, comment, _ := strings.Cut(item, "#")
		name = strings.TrimSpace(name)
		expected[name] = true
		if strings.Contains(comment, "flaky") {
			flaky[name] = true
		}
	}
	return expected, flaky
}

// summarize reads results/server-<scenario>-<ts>/checks.json.
func summarize(t *testing.T, dir string) (passed, failed int, byScenario map[string]string) {
	byScenario = map[string]string{}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		if err != nil {
			continue
		}
		var checks []struct {
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage"`
		}
		if err := json.Unmarshal(data, &checks); err != nil {
			t.Logf("%s: %v", e.Name(), err)
			continue
		}
		name := strings.TrimPrefix(e.Name(), "server-")
		if i := strings.Index(name, "-20"); i > 0 { // strip the -<timestamp> suffix
			name = name[:i]
		}
		status := "pass"
		for _, c := range checks {
			switch c.Status {
			case "SUCCESS":
				passed++
			case "FAILURE":
				failed++
				status = "FAIL:" + c.ErrorMessage
			}
		}
		byScenario[name] = status
	}
	return passed, failed, byScenario
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}
