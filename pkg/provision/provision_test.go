package provision

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden/*/want*")

// copyTree copies testdata into a temporary root so tests never write into
// the source tree.
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func TestGolden(t *testing.T) {
	cases := []struct {
		dir  string
		host bool
		want string
	}{
		{"mixed", false, "want"},
		{"mixed", true, "want-host"},
		{"empty", false, "want"},
	}
	for _, c := range cases {
		t.Run(c.dir+"/"+c.want, func(t *testing.T) {
			src := filepath.Join("testdata", "golden", c.dir)
			root := copyTree(t, filepath.Join(src, "in"))
			var out bytes.Buffer
			if err := Run(context.Background(), Options{Root: root, Host: c.host, Out: &out, SkipSetup: true}); err != nil {
				t.Fatalf("Run: %v\noutput:\n%s", err, out.String())
			}
			for _, name := range []string{RegistryFile, ComposeFile, InfraFile} {
				got, err := os.ReadFile(filepath.Join(root, name))
				if err != nil {
					t.Fatal(err)
				}
				wantPath := filepath.Join(src, c.want, filepath.Base(name))
				if *update {
					if err := os.MkdirAll(filepath.Dir(wantPath), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(wantPath, got, 0o644); err != nil {
						t.Fatal(err)
					}
					continue
				}
				want, err := os.ReadFile(wantPath)
				if err != nil {
					t.Fatalf("%v (run go test -update to create it)", err)
				}
				if !bytes.Equal(got, want) {
					t.Errorf("%s differs from %s:\n--- got\n%s\n--- want\n%s", name, wantPath, got, want)
				}
			}
		})
	}
}

// TestGeneratedFilesParse checks the generated files with real decoders:
// the registry as the gateway's snake_case map, the infra list as JSON.
func TestGeneratedFilesParse(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "golden", "mixed", "in"))
	if err := Run(context.Background(), Options{Root: root, AllowSetup: true}); err != nil {
		t.Fatal(err)
	}
	// The gateway's own reader of registry files.
	b, _ := os.ReadFile(filepath.Join(root, RegistryFile))
	servers, err := config.ParseRegistry(RegistryFile, b, config.KeepVars)
	if err != nil {
		t.Fatal(err)
	}
	reg := struct {
		Servers map[string]upstream.ServerConfig
	}{servers}
	echo := reg.Servers["local-echo"]
	if echo.Transport != "stdio" || echo.Command != "./run.sh" || strings.Join(echo.Args, " ") != "--verbose" || echo.Cwd != "servers/local-echo/bin" {
		t.Errorf("local-echo entry = %+v", echo)
	}
	if got := reg.Servers["weather"].URL; got != "http://weather:9000/mcp" {
		t.Errorf("weather url = %q", got)
	}
	if got := reg.Servers["images_svc"].URL; got != "http://images-svc:8081/sse" {
		t.Errorf("images_svc url = %q", got)
	}
	if _, ok := reg.Servers["notes"]; ok {
		t.Error("a folder without manifest.yaml was registered")
	}
	var infra InfraList
	b, _ = os.ReadFile(filepath.Join(root, InfraFile))
	if err := json.Unmarshal(b, &infra); err != nil {
		t.Fatal(err)
	}
	if len(infra.Servers) != 4 {
		t.Fatalf("infra servers = %d, want 4", len(infra.Servers))
	}
	for _, s := range infra.Servers {
		if s.ID == "weather" && (s.Secrets["API_KEY"] != "WEATHER_KEY" || s.Env["API_KEY"] != "") {
			t.Errorf("weather secret reference not split from env: %+v", s)
		}
	}
	if bytes.Contains(b, []byte("${WEATHER_KEY}")) {
		t.Error("infra list holds the ${VAR} env value instead of a secret name")
	}
	// Setup ran: the command the registry points at exists.
	if _, err := os.Stat(filepath.Join(root, "servers", "local-echo", "bin", "run.sh")); err != nil {
		t.Errorf("setup did not run: %v", err)
	}
}

func TestRemovingServerRemovesItEverywhere(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "golden", "mixed", "in"))
	ctx := context.Background()
	if err := Run(ctx, Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"weather", "local-echo"} {
		if err := os.RemoveAll(filepath.Join(root, "servers", id)); err != nil {
			t.Fatal(err)
		}
	}
	if err := Run(ctx, Options{Root: root}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{RegistryFile, ComposeFile, InfraFile} {
		b, _ := os.ReadFile(filepath.Join(root, name))
		for _, gone := range []string{"weather", "local-echo"} {
			if bytes.Contains(b, []byte(gone)) {
				t.Errorf("%s still mentions removed server %q:\n%s", name, gone, b)
			}
		}
	}
	b, _ := os.ReadFile(filepath.Join(root, RegistryFile))
	if !bytes.Contains(b, []byte("hosted")) {
		t.Errorf("remaining server hosted missing from registry:\n%s", b)
	}
}

func writeManifest(t *testing.T, root, id, body string) {
	t.Helper()
	dir := filepath.Join(root, "servers", id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ManifestName), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoadErrorsHaveFileAndLine(t *testing.T) {
	cases := []struct {
		name   string
		folder string
		body   string
		extra  func(t *testing.T, root string)
		want   []string // substrings of the error
	}{
		{"bad id chars", "bad id", "id: bad id\nkind: remote\nurl: https://x/mcp\n", nil,
			[]string{"servers/bad id/manifest.yaml:1:", "must match ^[A-Za-z0-9._-]+$"}},
		{"double underscore", "a__b", "kind: remote\nid: a__b\nurl: https://x/mcp\n", nil,
			[]string{"servers/a__b/manifest.yaml:2:", `must not contain "__"`}},
		{"id differs from folder", "echo", "id: other\nkind: stdio\ncommand: [x]\n", nil,
			[]string{"servers/echo/manifest.yaml:1:", `id "other" must equal the folder name "echo"`}},
		{"unknown kind", "k", "id: k\nkind: lambda\n", nil,
			[]string{"servers/k/manifest.yaml:2:", `unknown kind "lambda"`}},
		{"missing kind", "k", "id: k\n", nil,
			[]string{"servers/k/manifest.yaml:1:", "missing field kind"}},
		{"unknown transport", "r", "id: r\nkind: remote\nurl: https://x/mcp\ntransport: websocket\n", nil,
			[]string{"servers/r/manifest.yaml:4:", `unknown transport "websocket"`}},
		{"stdio transport http", "s", "id: s\nkind: stdio\ncommand: [x]\ntransport: sse\n", nil,
			[]string{"servers/s/manifest.yaml:4:", `unknown transport "sse" for kind stdio`}},
		{"missing url", "r", "id: r\nkind: remote\ntransport: sse\n", nil,
			[]string{"servers/r/manifest.yaml:2:", "kind remote needs url"}},
		{"relative url", "r", "id: r\nkind: remote\nurl: mcp.example.com/mcp\n", nil,
			[]string{"servers/r/manifest.yaml:3:", "absolute http:// or https:// URL"}},
		{"missing command", "s", "id: s\nkind: stdio\nsetup: [make]\n", nil,
			[]string{"servers/s/manifest.yaml:2:", "kind stdio needs command"}},
		{"command as string", "s", "id: s\nkind: stdio\ncommand: python server.py\n", nil,
			[]string{"servers/s/manifest.yaml:3:", `command must be a list, e.g. ["python", "server.py"]`}},
		{"missing port", "d", "id: d\nkind: docker\n", func(t *testing.T, root string) {
			os.WriteFile(filepath.Join(root, "servers", "d", "Dockerfile"), []byte("FROM scratch\n"), 0o644)
		}, []string{"servers/d/manifest.yaml:2:", "kind docker needs port"}},
		{"bad port", "d", "id: d\nkind: docker\nport: 70000\n", nil,
			[]string{"servers/d/manifest.yaml:3:", "port must be a number from 1 to 65535"}},
		{"no Dockerfile", "d", "id: d\nkind: docker\nport: 80\nbuild: src\n", nil,
			[]string{"servers/d/manifest.yaml:4:", "needs a Dockerfile in its build context servers/d/src"}},
		{"build escapes", "d", "id: d\nkind: docker\nport: 80\nbuild: ../other\n", nil,
			[]string{"servers/d/manifest.yaml:4:", "relative path inside the server folder"}},
		{"unknown field with hint", "s", "id: s\nkind: stdio\ncomand: [x]\ncommand: [x]\n", nil,
			[]string{"servers/s/manifest.yaml:3:", `unknown field "comand" (did you mean "command"?)`}},
		{"field of another kind", "r", "id: r\nkind: remote\nurl: https://x/mcp\nport: 80\n", nil,
			[]string{"servers/r/manifest.yaml:4:", `field "port" does not apply to kind remote`}},
		{"duplicate field", "s", "id: s\nkind: stdio\ncommand: [a]\ncommand: [b]\n", nil,
			[]string{"servers/s/manifest.yaml:4:", `field "command" is set twice (first on line 3)`}},
		{"bad env name", "s", "id: s\nkind: stdio\ncommand: [x]\nenv:\n  BAD-NAME: 1\n", nil,
			[]string{"servers/s/manifest.yaml:5:", `"BAD-NAME" is not a valid name`}},
		{"reserved variable in a header", "r", "id: r\nkind: remote\nurl: https://x/mcp\nheaders:\n  X-Trace: \"${AWS_SECRET_ACCESS_KEY}:$TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET\"\n", nil,
			[]string{"servers/r/manifest.yaml:4:", `server "r": header X-Trace names ${AWS_SECRET_ACCESS_KEY}, which is never expanded: AWS_SECRET_ACCESS_KEY is reserved`,
				`header X-Trace names ${TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET}`}},
		{"reserved variable in env", "s", "id: s\nkind: stdio\ncommand: [x]\nenv:\n  K: \"${MCP_GATEWAY_CONFIG_DIR}\"\n", nil,
			[]string{"servers/s/manifest.yaml:4:", `server "s": env K names ${MCP_GATEWAY_CONFIG_DIR}`}},
		{"invalid yaml", "s", "id: s\nkind: stdio\ncommand: [x\n", nil,
			[]string{"servers/s/manifest.yaml:", "invalid YAML"}},
		{"not a mapping", "s", "- id: s\n", nil,
			[]string{"servers/s/manifest.yaml:1:", "must be a mapping"}},
		{"two documents", "s", "id: s\nkind: stdio\ncommand: [x]\n---\nid: t\n", nil,
			[]string{"servers/s/manifest.yaml:4:", "one YAML document"}},
		{"empty", "s", "", nil,
			[]string{"servers/s/manifest.yaml:", "manifest is empty"}},
		{"duplicate id by case", "Echo", "id: Echo\nkind: remote\nurl: https://x/mcp\n", func(t *testing.T, root string) {
			writeManifest(t, root, "echo", "id: echo\nkind: remote\nurl: https://y/mcp\n")
		}, []string{"servers/echo/manifest.yaml:1:", `duplicate id "echo": servers/Echo/manifest.yaml already declares "Echo"`}},
		{"host name clash", "a.b", "id: a.b\nkind: stdio\ncommand: [x]\n", func(t *testing.T, root string) {
			writeManifest(t, root, "a-b", "id: a-b\nkind: stdio\ncommand: [x]\n")
		}, []string{"servers/a.b/manifest.yaml:1:", `gives the same host name "a-b"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			writeManifest(t, root, c.folder, c.body)
			if c.extra != nil {
				c.extra(t, root)
			}
			err := Run(context.Background(), Options{Root: root})
			if err == nil {
				t.Fatal("Run succeeded on an invalid manifest")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\n does not contain %q", err, w)
				}
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Errorf("error is %T, want provision.Errors", err)
			}
			// Nothing was written.
			for _, name := range []string{RegistryFile, ComposeFile, InfraFile} {
				if _, err := os.Stat(filepath.Join(root, name)); err == nil {
					t.Errorf("%s was written despite the error", name)
				}
			}
		})
	}
}

func TestInvalidManifestKeepsPreviousFiles(t *testing.T) {
	root := copyTree(t, filepath.Join("testdata", "golden", "mixed", "in"))
	ctx := context.Background()
	if err := Run(ctx, Options{Root: root, SkipSetup: true}); err != nil {
		t.Fatal(err)
	}
	before, _ := os.ReadFile(filepath.Join(root, RegistryFile))
	writeManifest(t, root, "broken", "id: broken\nkind: nope\n")
	if err := Run(ctx, Options{Root: root, SkipSetup: true}); err == nil {
		t.Fatal("want an error")
	}
	after, _ := os.ReadFile(filepath.Join(root, RegistryFile))
	if !bytes.Equal(before, after) {
		t.Error("a failed run changed the generated registry")
	}
}

func TestHostPortClash(t *testing.T) {
	root := t.TempDir()
	for _, id := range []string{"a", "b"} {
		writeManifest(t, root, id, "id: "+id+"\nkind: docker\nport: 9000\n")
		os.WriteFile(filepath.Join(root, "servers", id, "Dockerfile"), []byte("FROM scratch\n"), 0o644)
	}
	if err := Run(context.Background(), Options{Root: root}); err != nil {
		t.Fatalf("without --host the same port is fine: %v", err)
	}
	err := Run(context.Background(), Options{Root: root, Host: true})
	if err == nil || !strings.Contains(err.Error(), "servers/b/manifest.yaml:3: port 9000 is also used by \"a\"") {
		t.Fatalf("err = %v", err)
	}
}

// counterManifest writes a stdio server whose setup appends a line to
// count.txt each time it runs.
func counterManifest(t *testing.T, root, id, step string) {
	writeManifest(t, root, id, "id: "+id+"\nkind: stdio\ncommand: [\"true\"]\nsetup:\n  - "+step+"\n")
}

func runs(t *testing.T, root, id string) int {
	b, err := os.ReadFile(filepath.Join(root, "servers", id, "count.txt"))
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "\n")
}

func TestSetupRunsOnceUntilChanged(t *testing.T) {
	root := t.TempDir()
	ctx := context.Background()
	counterManifest(t, root, "s", `"echo run >> count.txt"`)
	steps := []struct {
		name  string
		opts  Options
		edit  string // new step, when set
		runs  int
		notes string // expected in output
	}{
		// Setup steps are shell commands from the manifest: they run only
		// with explicit consent (issue #11).
		{"not allowed", Options{}, "", 0, "1 setup step(s) not run"},
		{"first run", Options{AllowSetup: true}, "", 1, "setup 1/1"},
		{"unchanged", Options{AllowSetup: true}, "", 1, "setup unchanged; skipped"},
		{"forced", Options{AllowSetup: true, Force: true}, "", 2, "setup 1/1"},
		{"changed step", Options{AllowSetup: true}, `"echo run >> count.txt # v2"`, 3, "setup 1/1"},
		{"changed, not allowed", Options{}, `"echo run >> count.txt # v3"`, 3, "review them, then run `toolrag provision --allow-setup`"},
		{"unchanged again", Options{AllowSetup: true}, "", 4, "setup 1/1"},
		{"unchanged, not allowed", Options{}, "", 4, "wrote"},
		{"skip setup", Options{AllowSetup: true, SkipSetup: true, Force: true}, "", 4, "wrote"},
	}
	for _, s := range steps {
		if s.edit != "" {
			counterManifest(t, root, "s", s.edit)
		}
		var out bytes.Buffer
		s.opts.Root, s.opts.Out = root, &out
		if err := Run(ctx, s.opts); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if got := runs(t, root, "s"); got != s.runs {
			t.Errorf("%s: setup ran %d times in total, want %d", s.name, got, s.runs)
		}
		if !strings.Contains(out.String(), s.notes) {
			t.Errorf("%s: output %q lacks %q", s.name, out.String(), s.notes)
		}
	}
	if _, err := os.Stat(filepath.Join(root, "servers", "s", StateName)); err != nil {
		t.Errorf("state file missing: %v", err)
	}
}

func TestSetupFailure(t *testing.T) {
	root := t.TempDir()
	writeManifest(t, root, "s", "id: s\nkind: stdio\ncommand: [\"true\"]\nsetup:\n  - \"true\"\n  - \"echo compiling; echo 'error: missing header foo.h' >&2; exit 3\"\n")
	err := Run(context.Background(), Options{Root: root, AllowSetup: true})
	var se *SetupError
	if !errors.As(err, &se) {
		t.Fatalf("err = %v (%T), want *SetupError", err, err)
	}
	for _, w := range []string{`server "s"`, "setup step 2 of 2 failed", "exit status 3", "missing header foo.h", "servers/s/manifest.yaml:4"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if se.Step != 2 {
		t.Errorf("Step = %d", se.Step)
	}
	if _, err := os.Stat(filepath.Join(root, "servers", "s", StateName)); err == nil {
		t.Error("state written after a failed setup")
	}
	if _, err := os.Stat(filepath.Join(root, RegistryFile)); err == nil {
		t.Error("registry written after a failed setup")
	}
}

func TestOnlyLimitsSetup(t *testing.T) {
	root := t.TempDir()
	counterManifest(t, root, "a", `"echo run >> count.txt"`)
	counterManifest(t, root, "b", `"echo run >> count.txt"`)
	if err := Run(context.Background(), Options{Root: root, Only: "b", AllowSetup: true}); err != nil {
		t.Fatal(err)
	}
	if runs(t, root, "a") != 0 || runs(t, root, "b") != 1 {
		t.Errorf("runs a=%d b=%d, want 0 and 1", runs(t, root, "a"), runs(t, root, "b"))
	}
	b, _ := os.ReadFile(filepath.Join(root, RegistryFile))
	if bytes.Contains(b, []byte("  a:")) || !bytes.Contains(b, []byte("  b:")) {
		t.Errorf("the registry must list b (set up) and not a (setup not run):\n%s", b)
	}
	b, _ = os.ReadFile(filepath.Join(root, InfraFile))
	if !bytes.Contains(b, []byte(`"id": "a"`)) || !bytes.Contains(b, []byte(`"id": "b"`)) {
		t.Errorf("--only must still write every server to %s:\n%s", InfraFile, b)
	}
	err := Run(context.Background(), Options{Root: root, Only: "zzz"})
	if err == nil || !strings.Contains(err.Error(), `--only "zzz": no server with that id`) {
		t.Errorf("err = %v", err)
	}
}

func TestSetupContextCancel(t *testing.T) {
	root := t.TempDir()
	counterManifest(t, root, "s", `"sleep 30"`)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Run(ctx, Options{Root: root, AllowSetup: true}); err == nil {
		t.Fatal("want an error from a cancelled context")
	}
}

func TestHostName(t *testing.T) {
	cases := []struct{ id, want, err string }{
		{"weather", "weather", ""},
		{"My_Server.v2", "my-server-v2", ""},
		{"...", "", "cannot be turned into a host name"},
		{strings.Repeat("a", 64), "", "cannot be turned into a host name"},
	}
	for _, c := range cases {
		got, err := HostName(c.id)
		if got != c.want || (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("HostName(%q) = %q, %v; want %q, %q", c.id, got, err, c.want, c.err)
		}
	}
}

// TestManifestReference keeps servers/MANIFEST.example.yaml valid: each of
// its documents must parse, and together they must use every field.
func TestManifestReference(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "servers", "MANIFEST.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	used := map[string]bool{}
	kinds := map[string]bool{}
	for i, doc := range strings.Split(string(b), "\n---\n") {
		m, err := ParseManifest(fmt.Sprintf("MANIFEST.example.yaml#%d", i+1), []byte(doc))
		if err != nil {
			t.Fatalf("document %d: %v", i+1, err)
		}
		kinds[m.Kind] = true
		for f := range m.Lines {
			used[f] = true
		}
	}
	if len(kinds) != 3 {
		t.Errorf("kinds documented: %v", kinds)
	}
	for f := range allFields {
		if !used[f] {
			t.Errorf("field %q is not documented in MANIFEST.example.yaml", f)
		}
	}
}

// TestPendingSetupLeftOutOfRegistry: without --allow-setup a stdio server
// whose setup has not run is not written to the registry a local gateway
// reads (it could not start; the gateway would try it and log failures),
// the file says why, and the deploy files keep it. Once its setup has run,
// the registry lists it: the file changes, and a running gateway, which
// watches it, picks the server up.
func TestPendingSetupLeftOutOfRegistry(t *testing.T) {
	root := t.TempDir()
	counterManifest(t, root, "mem", `"echo run >> count.txt"`)
	writeManifest(t, root, "web", "id: web\nkind: remote\ntransport: streamable_http\nurl: \"https://mcp.example.com/mcp\"\n")
	read := func(name string) string {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	var out bytes.Buffer
	if err := Run(context.Background(), Options{Root: root, Out: &out}); err != nil {
		t.Fatal(err)
	}
	reg := read(RegistryFile)
	if strings.Contains(reg, "  mem:") || !strings.Contains(reg, "  web:") {
		t.Errorf("before setup the registry lists mem or lacks web:\n%s", reg)
	}
	if !strings.Contains(reg, "# Left out until their setup has run") || !strings.Contains(reg, ": mem\n") {
		t.Errorf("the registry does not say that mem is left out:\n%s", reg)
	}
	if !strings.Contains(out.String(), "mem: left out of config/registry.generated.yaml until its setup has run") {
		t.Errorf("output does not say mem is left out: %s", out.String())
	}
	if !strings.Contains(read(InfraFile), `"id": "mem"`) {
		t.Errorf("%s lost mem", InfraFile)
	}
	servers, err := config.LoadRegistry(filepath.Join(root, "none.yaml"), filepath.Join(root, RegistryFile), os.Getenv)
	if err != nil || len(servers) != 1 {
		t.Errorf("the gateway reads %v, %v from the registry; want only web", servers, err)
	}

	if err := Run(context.Background(), Options{Root: root, AllowSetup: true}); err != nil {
		t.Fatal(err)
	}
	reg2 := read(RegistryFile)
	if !strings.Contains(reg2, "  mem:") || strings.Contains(reg2, "Left out") {
		t.Errorf("after setup the registry lacks mem:\n%s", reg2)
	}
	// --skip-setup (a machine that only deploys) writes every server.
	counterManifest(t, root, "mem", `"echo run >> count.txt # v2"`)
	if err := Run(context.Background(), Options{Root: root, SkipSetup: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(read(RegistryFile), "  mem:") {
		t.Errorf("--skip-setup left mem out")
	}
}
