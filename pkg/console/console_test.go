package console

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/metrics/usage"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// staticSource is an in-memory gateway: a fixed catalog and key list.
type staticSource struct {
	tools []catalog.Tool
	keys  []policy.Key
}

func (s staticSource) Servers(context.Context) ([]Server, error) {
	return []Server{{ID: "b", Transport: "stdio", Status: StatusDown, Reason: "exit 1"}, {ID: "a", Transport: "sse", Status: StatusUp}}, nil
}
func (s staticSource) Tools(context.Context) ([]catalog.Tool, error) { return s.tools, nil }
func (s staticSource) Keys(context.Context) ([]policy.Key, error)    { return s.keys, nil }

// policyRetriever returns every tool the request's policy allows, in
// catalog order: enough to see which policy the console used.
type policyRetriever struct{ tools []catalog.Tool }

func (r policyRetriever) Retrieve(_ context.Context, req retrieve.Request) (retrieve.Response, error) {
	var out retrieve.Response
	for _, t := range r.tools {
		if req.Policy.AllowsTool(t.Server, t.Name) && len(out.Results) < req.TopK {
			out.Results = append(out.Results, retrieve.Result{Tool: t, Score: 1, Reason: "q=" + req.Query})
		}
	}
	return out, nil
}

func testConsole(t *testing.T) (*Console, *usage.Recorder) {
	t.Helper()
	var tools []catalog.Tool
	for i := range 250 {
		srv := "a"
		if i%2 == 1 {
			srv = "b"
		}
		tools = append(tools, catalog.Tool{ID: fmt.Sprintf("%s__tool%03d", srv, i), Server: srv, Name: fmt.Sprintf("tool%03d", i),
			Description: strings.Repeat("d", 300), ToolType: "query", Status: "active", InputSchema: json.RawMessage(`{"type":"object"}`)})
	}
	keys := []policy.Key{
		{ID: "root", Admin: true, SecretHash: policy.HashSecret("s1"), Servers: map[string]policy.Rule{"a": {}, "b": {}}},
		{ID: "only-b", SecretHash: policy.HashSecret("s2"), Servers: map[string]policy.Rule{"b": {}}},
	}
	rec := usage.New()
	c, err := New(Config{Source: staticSource{tools: tools, keys: keys}, Usage: rec,
		Retrievers: []NamedRetriever{{Name: "default", Retriever: policyRetriever{tools}}}})
	if err != nil {
		t.Fatal(err)
	}
	return c, rec
}

func do(t *testing.T, h http.Handler, pol *policy.Policy, method, path, body string) (*httptest.ResponseRecorder, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if pol != nil {
		req = req.WithContext(policy.NewContext(req.Context(), *pol))
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	var out map[string]any
	if strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(w.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s %s: %v in %s", method, path, err, w.Body)
		}
	}
	return w, out
}

func TestAdminEndpointsNeedAnAdmin(t *testing.T) {
	c, _ := testConsole(t)
	h := c.Admin()
	admin := policy.For(policy.Key{ID: "root", Admin: true})
	agent := policy.For(policy.Key{ID: "agent", Servers: map[string]policy.Rule{"a": {}, "b": {}}})
	routes := []struct{ method, path, body string }{
		{"GET", "/tool-rag/admin/whoami", ""},
		{"GET", "/tool-rag/admin/servers", ""},
		{"GET", "/tool-rag/admin/tools", ""},
		{"GET", "/tool-rag/admin/tools/a__tool000", ""},
		{"GET", "/tool-rag/admin/keys", ""},
		{"POST", "/tool-rag/admin/search", `{"queries":["x"]}`},
		{"GET", "/tool-rag/admin/usage", ""},
		{"GET", "/tool-rag/admin/overview", ""},
		{"POST", "/tool-rag/admin/sync", ""},
		{"GET", "/tool-rag/admin/nope", ""},
	}
	for _, r := range routes {
		if w, _ := do(t, h, nil, r.method, r.path, r.body); w.Code != http.StatusUnauthorized {
			t.Errorf("%s %s without a policy: %d, want 401", r.method, r.path, w.Code)
		}
		w, body := do(t, h, &agent, r.method, r.path, r.body)
		if w.Code != http.StatusForbidden || !strings.Contains(fmt.Sprint(body["error"]), "admin key") {
			t.Errorf("%s %s as a non-admin: %d %v, want 403", r.method, r.path, w.Code, body)
		}
		if strings.Contains(w.Body.String(), "tool000") || strings.Contains(w.Body.String(), "only-b") {
			t.Errorf("%s %s leaked admin data to a non-admin: %s", r.method, r.path, w.Body)
		}
		if w, _ := do(t, h, &admin, r.method, r.path, r.body); w.Code == http.StatusForbidden || w.Code == http.StatusUnauthorized {
			t.Errorf("%s %s as admin: %d", r.method, r.path, w.Code)
		}
		if got := w.Header().Get("Cache-Control"); got != "no-store" {
			t.Errorf("%s %s: Cache-Control %q, want no-store", r.method, r.path, got)
		}
	}
}

func TestToolsPagesAndFilters(t *testing.T) {
	c, _ := testConsole(t)
	admin := policy.For(policy.Key{ID: "root", Admin: true})
	tests := []struct {
		query       string
		total, rows int
		first       string
	}{
		{"", 250, 100, "a__tool000"},
		{"?offset=200", 250, 50, "a__tool200"},
		{"?server=b&limit=10", 125, 10, "b__tool001"},
		{"?q=TOOL24", 10, 10, "a__tool240"},
		{"?q=tool2&server=a&offset=20", 25, 5, "a__tool240"},
		{"?status=stale", 0, 0, ""},
	}
	for _, tc := range tests {
		w, body := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/tools"+tc.query, "")
		if w.Code != 200 {
			t.Fatalf("%s: %d %s", tc.query, w.Code, w.Body)
		}
		items := body["items"].([]any)
		if int(body["total"].(float64)) != tc.total || len(items) != tc.rows {
			t.Errorf("%s: total %v, %d rows; want %d, %d", tc.query, body["total"], len(items), tc.total, tc.rows)
			continue
		}
		if tc.rows > 0 {
			it := items[0].(map[string]any)
			if it["tool_id"] != tc.first {
				t.Errorf("%s: first row %v, want %s", tc.query, it["tool_id"], tc.first)
			}
			if d := it["description"].(string); len([]rune(d)) != rowDescChars+1 {
				t.Errorf("%s: row description of %d characters, want it cut to %d", tc.query, len([]rune(d)), rowDescChars)
			}
		}
	}
	for _, bad := range []string{"?limit=0", "?limit=501", "?offset=-1", "?offset=x"} {
		if w, _ := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/tools"+bad, ""); w.Code != http.StatusBadRequest {
			t.Errorf("%s: %d, want 400", bad, w.Code)
		}
	}
	w, body := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/tools/b__tool001", "")
	if w.Code != 200 || body["input_schema"] == nil || len(body["description"].(string)) != 300 {
		t.Errorf("one tool: %d %v", w.Code, body)
	}
	if w, _ := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/tools/none", ""); w.Code != 404 {
		t.Errorf("unknown tool: %d, want 404", w.Code)
	}
}

func TestSearchUsesThePickedKeysPolicy(t *testing.T) {
	c, _ := testConsole(t)
	admin := policy.For(policy.Key{ID: "root", Admin: true, Servers: map[string]policy.Rule{"a": {}, "b": {}}})
	tests := []struct {
		body    string
		code    int
		servers string // servers of the results, in order
		keyID   string
	}{
		{`{"queries":["find"]}`, 200, "a b a b a", "root"},
		{`{"queries":["find"], "key_id":"only-b", "top_k":3}`, 200, "b b b", "only-b"},
		{`{"queries":["find", "other"], "key_id":"root", "allowed_servers":["a"], "top_k":2}`, 200, "a a a a", "root"},
		{`{"queries":["find"], "key_id":"only-b", "allowed_servers":["a"]}`, 200, "", "only-b"},
		{`{"queries":["find"], "key_id":"ghost"}`, 404, "", ""},
		{`{"queries":[" "]}`, 400, "", ""},
		{`{"queries":["1","2","3","4","5","6","7","8","9"]}`, 400, "", ""},
		{`{"queries":["x"], "top_k": 51}`, 400, "", ""},
		{`{"queries":["x"], "variants":["other"]}`, 400, "", ""},
		{`{"queries":["x"], "extra":1}`, 400, "", ""},
	}
	for _, tc := range tests {
		w, body := do(t, c.Admin(), &admin, "POST", "/tool-rag/admin/search", tc.body)
		if w.Code != tc.code {
			t.Errorf("%s: %d %s, want %d", tc.body, w.Code, w.Body, tc.code)
			continue
		}
		if tc.code != 200 {
			continue
		}
		var servers []string
		for _, g := range body["groups"].([]any) {
			for _, r := range g.(map[string]any)["results"].([]any) {
				servers = append(servers, r.(map[string]any)["server_name"].(string))
			}
		}
		if got := strings.Join(servers, " "); got != tc.servers || body["key_id"] != tc.keyID {
			t.Errorf("%s: servers %q as %v, want %q as %s", tc.body, got, body["key_id"], tc.servers, tc.keyID)
		}
	}
}

func TestKeysNeverShowHashes(t *testing.T) {
	c, _ := testConsole(t)
	admin := policy.For(policy.Key{ID: "root", Admin: true})
	w, body := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/keys", "")
	if w.Code != 200 || len(body["keys"].([]any)) != 2 {
		t.Fatalf("keys: %d %s", w.Code, w.Body)
	}
	if strings.Contains(w.Body.String(), "sha256") || strings.Contains(w.Body.String(), policy.HashSecret("s1")[7:]) {
		t.Errorf("a key hash reached the console: %s", w.Body)
	}
}

func TestServersCarryUsage(t *testing.T) {
	c, rec := testConsole(t)
	rec.Call("root", "a", usage.OK, 3*time.Millisecond)
	rec.Call("root", "a", "upstream_error", 9*time.Millisecond)
	admin := policy.For(policy.Key{ID: "root", Admin: true})
	_, body := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/servers", "")
	servers := body["servers"].([]any)
	a := servers[0].(map[string]any)
	if a["id"] != "a" || a["calls"].(float64) != 2 || a["errors"].(float64) != 1 || a["p99_ms"].(float64) < 9 {
		t.Errorf("server a = %v", a)
	}
	if counts := body["counts"].(map[string]any); counts["up"].(float64) != 1 || counts["down"].(float64) != 1 {
		t.Errorf("counts = %v", counts)
	}
	_, body = do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/usage", "")
	keys := body["keys"].([]any)
	if len(keys) != 1 || keys[0].(map[string]any)["calls"].(float64) != 2 || len(body["latency"].(map[string]any)["buckets"].([]any)) == 0 {
		t.Errorf("usage = %v", body)
	}
}

func TestAppHeadersAndRoutes(t *testing.T) {
	c, _ := testConsole(t)
	h := c.App()
	tests := []struct {
		path, want string
		code       int
	}{
		{"/console", "", http.StatusMovedPermanently},
		{"/console/", "<script src=\"app.js\" defer></script>", 200},
		{"/console/app.js", "use strict", 200},
		{"/console/app.css", ":root", 200},
		{"/console/config.json", "\"admin_prefix\":\"/tool-rag/admin\"", 200},
		{"/console/missing.js", "", 404},
		{"/consoleX", "", 404},
		{"/console/../go.mod", "", 404},
	}
	for _, tc := range tests {
		w, _ := do(t, h, nil, "GET", tc.path, "")
		if w.Code != tc.code || !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("GET %s: %d, want %d with %q", tc.path, w.Code, tc.code, tc.want)
		}
		csp := w.Header().Get("Content-Security-Policy")
		for _, d := range []string{"default-src 'none'", "script-src 'self'", "frame-ancestors 'none'"} {
			if !strings.Contains(csp, d) {
				t.Errorf("GET %s: CSP %q lacks %q", tc.path, csp, d)
			}
		}
		if strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
			t.Errorf("GET %s: CSP allows inline code: %q", tc.path, csp)
		}
		if w.Header().Get("X-Frame-Options") != "DENY" || w.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: frame/nosniff headers missing: %v", tc.path, w.Header())
		}
	}
	if w, _ := do(t, h, nil, "POST", "/console/", ""); w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST /console/: %d, want 405", w.Code)
	}
}

// TestAssetsAreSmallAndHaveNoInlineCode: the budget is 150 KB gzipped, no
// script or style inline (the CSP forbids them, so they would silently not
// run), and no API that parses data as HTML.
func TestAssetsAreSmallAndHaveNoInlineCode(t *testing.T) {
	var raw bytes.Buffer
	zw := gzip.NewWriter(&raw)
	err := fs.WalkDir(assets, "assets", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(path)
		if err != nil {
			return err
		}
		_, _ = zw.Write(b)
		s := string(b)
		if strings.HasSuffix(path, ".html") {
			if strings.Contains(s, "<script>") || strings.Contains(s, "<style") || strings.Contains(s, " style=") || strings.Contains(s, " on") && strings.Contains(s, "onclick=") {
				t.Errorf("%s has inline script or style", path)
			}
			if strings.Contains(s, "http://") || strings.Contains(s, "https://") {
				t.Errorf("%s loads something from another origin", path)
			}
		}
		if strings.HasSuffix(path, ".js") {
			for _, bad := range []string{"innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function", "localStorage"} {
				if strings.Contains(s, bad) {
					t.Errorf("%s uses %s", path, bad)
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	_ = zw.Close()
	if raw.Len() > 150<<10 {
		t.Errorf("console assets are %d bytes gzipped; the budget is 150 KB", raw.Len())
	}
	t.Logf("console assets: %d bytes gzipped", raw.Len())
}

// fixedConnections is a Connections with a fixed list.
type fixedConnections []vault.Info

func (f fixedConnections) Connections(context.Context, string) ([]vault.Info, error) {
	return f, nil
}
func (f fixedConnections) Revoke(context.Context, string, string) (int, error) { return 0, nil }

// TestConnectionsShowPrincipal: the admin list of connections carries each
// principal (vault.Info leaves it out of its own JSON; the console revokes
// by it), sorted by key id, with the grant's kind and times.
func TestConnectionsShowPrincipal(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	c, err := New(Config{Source: staticSource{}, Retrievers: []NamedRetriever{{Name: "default", Retriever: policyRetriever{}}}, Connections: fixedConnections{
		{Principal: "p-bob", Server: "up", Kind: vault.KindSecret, KeyID: "bob", Updated: at},
		{Principal: "p-alice", Server: "up", Kind: vault.KindOAuth, KeyID: "alice", Updated: at, Expiry: at.Add(time.Hour)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	admin := policy.For(policy.Key{ID: "root", Admin: true})
	w, out := do(t, c.Admin(), &admin, "GET", "/tool-rag/admin/connections?server=up", "")
	list, _ := out["connections"].([]any)
	if w.Code != http.StatusOK || len(list) != 2 {
		t.Fatalf("%d %s, want 2 connections", w.Code, w.Body)
	}
	first, _ := list[0].(map[string]any)
	want := map[string]any{"principal": "p-alice", "key_id": "alice", "server": "up", "kind": "oauth",
		"connected_at": "2026-03-01T12:00:00Z", "expires_at": "2026-03-01T13:00:00Z"}
	if fmt.Sprint(first) != fmt.Sprint(want) {
		t.Errorf("first connection %v, want %v", first, want)
	}
	if second, _ := list[1].(map[string]any); second["principal"] != "p-bob" || second["expires_at"] != nil {
		t.Errorf("second connection %v, want bob's without expiry", second)
	}
}
