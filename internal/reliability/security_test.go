package reliability

import (
	"context"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// TestHostileToolList: an upstream whose tools/list is huge (50,000 tools
// in one page) or never ends (a new cursor on every page) is cut at the
// gateway's limits (TOOL_RAG_MAX_TOOLS_PER_SERVER, default 2,000;
// TOOL_RAG_MAX_TOOL_PAGES, default 100): the sync keeps the first tools,
// reports the server degraded with the reason (in the sync report and
// /tool-rag/health), the other servers sync normally, and the gateway's
// heap stays bounded. Before the limits, the endless list ran until the
// sync timeout and the server's tools were lost as stale; the 50k list was
// stored and indexed whole.
func TestHostileToolList(t *testing.T) {
	cases := []struct {
		name      string
		mode      string
		page      string
		wantTools int
		reason    string
	}{
		{"50k tools in one page", "flood-tools", "50000", 2000, "lists more than 2000 tools (TOOL_RAG_MAX_TOOLS_PER_SERVER)"},
		{"endless pages", "flood-tools", "10", 1000, "has more than 100 pages (TOOL_RAG_MAX_TOOL_PAGES)"},
		{"cursor loop", "loop-tools", "10", 20, "pagination repeats a cursor after 2 pages"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "flood", "", "-misbehave="+tc.mode, "-flood-page="+tc.page)
			keys := "keys:\n  - id: admin\n    secret: \"s-flood-admin\"\n    admin: true\n    servers: {echo: {}, flood: {}}\n"
			g := startGateway(t, gwOpts{Registry: reg, Keys: keys, NoSync: true, Env: map[string]string{"TOOL_RAG_SYNC_TIMEOUT": "20"}})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rep, err := g.g.Sync(context.Background(), indexer.ModeFull)
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if rep.Synced != 2 || len(rep.Stale) != 0 {
				t.Errorf("sync report: %+v (want both servers synced, none stale)", rep)
			}
			if got := rep.Degraded["flood"]; !strings.Contains(got, tc.reason) {
				t.Errorf("degraded reason %q, want it to contain %q", got, tc.reason)
			}
			n := 0
			for id := range toolStatus(t, g.g) {
				if strings.HasPrefix(id, "flood__") {
					n++
				}
			}
			if n != tc.wantTools {
				t.Errorf("flood tools in the catalog: %d, want %d", n, tc.wantTools)
			}
			code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/health", "s-flood-admin", "", nil)
			if code != 200 || !strings.Contains(body, `"degraded"`) || !strings.Contains(body, tc.reason) {
				t.Errorf("health does not report the degraded server: %d %s", code, body)
			}
			grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("heap after sync grew by %.1f MB", float64(grew)/(1<<20))
			if grew > 256<<20 {
				t.Errorf("heap grew by %d MB over one sync of a hostile upstream", grew>>20)
			}
		})
	}
}

// newGateway builds a local gateway from files without failing the test,
// to check what it refuses at start.
func newGateway(t *testing.T, registry, keys string) (*local.Runtime, *testenv.Buffer, error) {
	t.Helper()
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "registry.yaml"), registry)
	writeFile(t, filepath.Join(dir, "keys.yaml"), keys)
	env := gatewayEnv(dir)
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	g, err := local.New(context.Background(), local.Options{Getenv: func(k string) string { return env[k] }, Logger: log})
	if err == nil {
		t.Cleanup(func() { g.Close() })
	}
	return g, logs, err
}

// TestAmbiguousServerIDsRefused: server ids "evil" and "evil_" made
// "evil___add" ambiguous (evil's "_add" or evil_'s "add"): a key granted
// only evil read evil_'s tool, and one record overwrote the other. An id
// that starts or ends with "_" is now refused at load, naming file and
// line, in the registry and in the keys.
func TestAmbiguousServerIDsRefused(t *testing.T) {
	reg := "servers:\n" + stdioEntry(t, "evil", "") + stdioEntry(t, "evil_", "")
	keys := "keys:\n  - id: k\n    secret: \"s-ambiguous\"\n    servers: {evil: {}}\n"
	_, _, err := newGateway(t, reg, keys)
	if err == nil || !strings.Contains(err.Error(), `registry.yaml:6: server "evil_": server id "evil_" must not start or end with "_"`) {
		t.Errorf("registry with evil and evil_: %v", err)
	}
	reg = "servers:\n" + stdioEntry(t, "evil", "")
	keys = "keys:\n  - id: k\n    secret: \"s-ambiguous\"\n    servers: {evil: {}, _evil: {}}\n"
	if _, _, err := newGateway(t, reg, keys); err == nil || !strings.Contains(err.Error(), `keys.yaml:2: key "k": servers: server id "_evil" must not start or end with "_"`) {
		t.Errorf("key granting _evil: %v", err)
	}
}

// TestSyncRefusesAmbiguousIDs: a registry that bypasses the config checks
// (e.g. an old DynamoDB registry table still holding "evil_") is refused
// by the sync itself: evil_ is reported and none of its tools is stored,
// so its "add" can never be read as evil's "_add".
func TestSyncRefusesAmbiguousIDs(t *testing.T) {
	reg := "servers:\n" + stdioEntry(t, "evil", "")
	keys := "keys:\n  - id: k\n    secret: \"s-ambiguous\"\n    servers: {evil: {}}\n"
	g := startGateway(t, gwOpts{Registry: reg, Keys: keys, NoSync: true})
	servers := map[string]upstream.ServerConfig{
		"evil":  {Transport: upstream.TransportStdio, Command: echoBin(t)},
		"evil_": {Transport: upstream.TransportStdio, Command: echoBin(t)},
	}
	g.g.Upstreams.SetServers(servers)
	rep, err := g.g.Sync(context.Background(), indexer.ModeOff)
	if err != nil {
		t.Fatal(err)
	}
	for id, status := range toolStatus(t, g.g) {
		if !strings.HasPrefix(id, "evil__") || strings.HasPrefix(id, "evil___") {
			t.Errorf("stored %s (%s): only evil's own tools may be stored", id, status)
		}
	}
	if !strings.Contains(rep.Refused["evil_"], `must not start or end with "_"`) {
		t.Errorf("sync report does not name the refused server: %+v", rep.Refused)
	}
	if !strings.Contains(g.logs.String(), "sync refused a server") {
		t.Error("the refusal is not logged")
	}
}

// TestUnprefixedCannotShadow: an unprefixed server publishing "echo__pwn"
// took over a name in echo's namespace (a client calling echo__pwn
// reached another server). Such a name keeps its prefix now.
func TestUnprefixedCannotShadow(t *testing.T) {
	reg := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "plain", "unprefixed: true", "-alias", "echo__pwn")
	keys := "keys:\n  - id: admin\n    secret: \"s-shadow-admin\"\n    admin: true\n    servers: {echo: {}, plain: {}}\n"
	g := startGateway(t, gwOpts{Registry: reg, Keys: keys})
	c := connect(t, g.url, "s-shadow-admin", false, nil)
	names := listNames(t, c)
	if has(names, "echo__pwn") || !has(names, "plain__echo__pwn") || !has(names, "reverse") {
		t.Errorf("tools/list = %v: want plain__echo__pwn (prefixed), not echo__pwn, and plain's other tools unprefixed", sorted(names))
	}
	res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__pwn", "arguments": map[string]any{"text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "not found") {
		t.Errorf("run_tool echo__pwn reached a tool: %v %q", err, testenv.Text(res))
	}
	res, err = testenv.CallTool(c, 30*time.Second, "plain__echo__pwn", map[string]any{"text": "x"})
	if err != nil || res.IsError || testenv.Text(res) != "alias echo__pwn: x" {
		t.Errorf("plain__echo__pwn: %v %q", err, testenv.Text(res))
	}
	pl, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var prompts []string
	for _, p := range pl.Prompts {
		prompts = append(prompts, p.Name)
	}
	if has(prompts, "echo__pwn") || !has(prompts, "plain__echo__pwn") || !has(prompts, "greeting") {
		t.Errorf("prompts/list = %v: want plain__echo__pwn (prefixed), not echo__pwn", sorted(prompts))
	}
}

// TestKeyGrantsChecked: a key granting a server the registry does not have
// is refused at start, naming the key and the server (before, it silently
// granted nothing); a key whose rules mean less than before (a list not
// named) is warned about once at start.
func TestKeyGrantsChecked(t *testing.T) {
	reg := "servers:\n" + stdioEntry(t, "echo", "")
	keys := "keys:\n  - id: typo\n    secret: \"s-typo\"\n    servers: {ehco: {}, echo: {}}\n"
	if _, _, err := newGateway(t, reg, keys); err == nil || !strings.Contains(err.Error(), `key "typo" grants server "ehco", not in the registry`) {
		t.Errorf("key granting an unknown server: %v", err)
	}
	keys = "keys:\n  - id: narrow\n    secret: \"s-narrow\"\n    servers: {echo: {tool_prefixes: [get]}}\n"
	_, logs, err := newGateway(t, reg, keys)
	if err != nil {
		t.Fatal(err)
	}
	out := logs.String()
	for _, want := range []string{`key \"narrow\", server \"echo\": the rule does not name uri_prefixes, so it now grants no resources`, `does not name prompt_prefixes`} {
		if strings.Count(out, want) != 1 {
			t.Errorf("want one warning %q in the start logs:\n%s", want, out)
		}
	}
}

// TestMetaToolArgumentsStrict: an unknown argument of a meta-tool is
// refused naming it (before, find_tools silently ignored an
// "allowed_servers" the caller thought narrowed the search).
func TestMetaToolArgumentsStrict(t *testing.T) {
	reg := "servers:\n" + stdioEntry(t, "echo", "")
	keys := "keys:\n  - id: agent\n    secret: \"s-strict\"\n    servers: {echo: {}}\n"
	g := startGateway(t, gwOpts{Registry: reg, Keys: keys})
	c := connect(t, g.url, "s-strict", false, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"find_tools", map[string]any{"query": "echo", "allowed_servers": []any{"echo"}}, `invalid params for find_tools: unknown field "allowed_servers"`},
		{"run_tool", map[string]any{"call_name": "echo__echo", "args": map[string]any{"text": "x"}}, `unknown field "args"`},
		{"run_tools", map[string]any{"calls": []any{map[string]any{"call_name": "echo__echo", "arguments": map[string]any{"text": "x"}, "timeout": 5}}}, `unknown field "calls[0].timeout"`},
	} {
		res, err := testenv.CallTool(c, 30*time.Second, tc.tool, tc.args)
		if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), tc.want) {
			t.Errorf("%s %v: %v %q, want %q", tc.tool, tc.args, err, testenv.Text(res), tc.want)
		}
	}
}
