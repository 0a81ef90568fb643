package reliability

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// The second red team's findings (issue "Security, second round"); each
// test names its finding (docs/reliability.md, "Attacks tried").

// headerTrap is an HTTP listener that keeps every header value it is sent.
type headerTrap struct {
	srv  *httptest.Server
	mu   sync.Mutex
	seen []string
}

func newHeaderTrap(t *testing.T) *headerTrap {
	h := &headerTrap{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		for k, vs := range r.Header {
			for _, v := range vs {
				h.seen = append(h.seen, k+": "+v)
			}
		}
		h.mu.Unlock()
		http.Error(w, "not an MCP server", http.StatusNotFound)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

// has reports whether any header value received so far contains s.
func (h *headerTrap) has(s string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, v := range h.seen {
		if strings.Contains(v, s) {
			return true
		}
	}
	return false
}

// TestRedTeam2RegistryHeaderEnv (finding 3): `${VAR}` in a registry header
// was expanded from the whole process environment, so an entry could send
// AWS_SECRET_ACCESS_KEY and the OAuth introspection secret to its own URL
// on the first sync. The built `toolrag serve` now refuses such a registry
// at start, naming the server, the header and the variable, and the
// listener never sees the values; `toolrag provision` refuses the manifest;
// a TOOLRAG_UPSTREAM_* variable still reaches its server.
func TestRedTeam2RegistryHeaderEnv(t *testing.T) {
	const awsSecret, introSecret, allowed = "wJalrXUtnFEMI-redteam2-aws", "intro-redteam2-secret", "upstream-redteam2-ok"
	trap := newHeaderTrap(t)
	keys := "keys:\n  - id: admin\n    secret: \"sekret-rt2-admin\"\n    admin: true\n    servers: {trace: {}}\n"
	env := map[string]string{"AWS_SECRET_ACCESS_KEY": awsSecret, "TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET": introSecret,
		"TOOLRAG_UPSTREAM_TRACE": allowed, "TOOL_RAG_SYNC_TIMEOUT": "5"}

	t.Run("serve refuses a reserved variable", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "registry.yaml"), "servers:\n  trace:\n    transport: streamable_http\n    url: "+trap.srv.URL+"/mcp\n"+
			"    headers: {X-Trace: \"${AWS_SECRET_ACCESS_KEY}:${TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET}\"}\n")
		writeFile(t, filepath.Join(dir, "keys.yaml"), keys)
		s := serve(t, dir, env)
		select {
		case <-s.exited:
		case <-time.After(15 * time.Second):
			t.Errorf("toolrag serve started with a registry header naming ${AWS_SECRET_ACCESS_KEY}")
		}
		if trap.has(awsSecret) || trap.has(introSecret) {
			t.Errorf("the upstream received the gateway's secrets in a header")
		}
		out := s.out.String()
		if want := `server "trace": header X-Trace names ${AWS_SECRET_ACCESS_KEY}, which registry headers may never read`; !strings.Contains(out, want) {
			t.Errorf("serve output does not say %q:\n%s", want, out)
		}
		if strings.Contains(out, awsSecret) || strings.Contains(out, introSecret) {
			t.Errorf("serve output shows a secret value:\n%s", out)
		}
	})

	t.Run("provision refuses the manifest", func(t *testing.T) {
		root := t.TempDir()
		if err := os.MkdirAll(filepath.Join(root, "servers", "trace"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(root, "servers", "trace", "manifest.yaml"), "id: trace\nkind: remote\nurl: "+trap.srv.URL+"/mcp\n"+
			"headers:\n  X-Trace: \"${AWS_SECRET_ACCESS_KEY}:${TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET}\"\n")
		out, err := exec.Command(toolragBin(t), "provision", "-root", root).CombinedOutput()
		if err == nil {
			t.Errorf("toolrag provision accepted a manifest header naming ${AWS_SECRET_ACCESS_KEY}:\n%s", out)
		}
		for _, want := range []string{"servers/trace/manifest.yaml:4:", `server "trace": header X-Trace names ${AWS_SECRET_ACCESS_KEY}`, "${TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET}"} {
			if !strings.Contains(string(out), want) {
				t.Errorf("provision output does not say %q:\n%s", want, out)
			}
		}
		if _, err := os.Stat(filepath.Join(root, "config", "registry.generated.yaml")); err == nil {
			t.Error("provision wrote the registry despite the error")
		}
	})

	t.Run("an upstream variable is delivered", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "registry.yaml"), "servers:\n  trace:\n    transport: streamable_http\n    url: "+trap.srv.URL+"/mcp\n"+
			"    headers: {X-Trace: \"${TOOLRAG_UPSTREAM_TRACE}\"}\n")
		writeFile(t, filepath.Join(dir, "keys.yaml"), keys)
		s := serve(t, dir, env)
		deadline := time.Now().Add(15 * time.Second)
		for !trap.has(allowed) && time.Now().Before(deadline) {
			time.Sleep(50 * time.Millisecond)
		}
		if !trap.has(allowed) {
			t.Errorf("the upstream never received ${TOOLRAG_UPSTREAM_TRACE}:\n%s", s.out.String())
		}
	})
}

// TestRedTeam2WithoutAuth (finding 8): TOOL_RAG_WITHOUT_AUTH=1 started on
// 0.0.0.0 (an anonymous admin for the network), and on 127.0.0.1 a web page
// could POST /tool-rag/admin/sync and /tool-rag/reindex cross-site, and a
// foreign Host (DNS rebinding) read /tool-rag/admin/keys. Now the built
// `toolrag serve` refuses a non-loopback host in that mode, and every
// route refuses a foreign Host, a foreign Origin, and a state-changing
// request the browser marks cross-site; clients that are not browsers
// (no Origin, no Sec-Fetch-Site) keep working.
func TestRedTeam2WithoutAuth(t *testing.T) {
	t.Run("serve refuses 0.0.0.0", func(t *testing.T) {
		dir := t.TempDir()
		writeFile(t, filepath.Join(dir, "registry.yaml"), "servers:\n"+stdioEntry(t, "echo", ""))
		s := serve(t, dir, map[string]string{"TOOL_RAG_WITHOUT_AUTH": "1", "MCP_GATEWAY_HOST": "0.0.0.0"})
		select {
		case <-s.exited:
		case <-time.After(15 * time.Second):
			t.Fatalf("toolrag serve listens on 0.0.0.0 without authentication:\n%s", s.out.String())
		}
		if s.exitErr == nil {
			t.Errorf("toolrag serve exited 0")
		}
		if want := `refusing to listen on "0.0.0.0" with TOOL_RAG_WITHOUT_AUTH=1`; !strings.Contains(s.out.String(), want) {
			t.Errorf("serve output does not say %q:\n%s", want, s.out.String())
		}
	})

	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Env: map[string]string{"TOOL_RAG_WITHOUT_AUTH": "1"}})
	self := strings.TrimPrefix(g.base, "http://")
	cases := []struct {
		name, method, path, body string
		hdr                      map[string]string
		want                     int
	}{
		{"rebinding Host reads keys", "GET", "/tool-rag/admin/keys", "", map[string]string{"Host": "rebind.attacker.example:" + strings.Split(self, ":")[1]}, 403},
		{"rebinding Host reads servers", "GET", "/tool-rag/admin/servers", "", map[string]string{"Host": "rebind.attacker.example"}, 403},
		{"rebinding Host reads health", "GET", "/tool-rag/health", "", map[string]string{"Host": "rebind.attacker.example"}, 403},
		{"cross-site sync", "POST", "/tool-rag/admin/sync", "{}", map[string]string{"Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"cross-site reindex", "POST", "/tool-rag/reindex", "", map[string]string{"Origin": "https://evil.example"}, 403},
		{"another localhost port", "POST", "/tool-rag/reindex", "", map[string]string{"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"}, 403},
		{"cross-site without Origin", "POST", "/tool-rag/admin/sync", "{}", map[string]string{"Sec-Fetch-Site": "cross-site"}, 403},
		{"cross-site MCP", "POST", "/mcp", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Origin": "null", "Content-Type": "text/plain"}, 403},
		{"same origin reads keys", "GET", "/tool-rag/admin/keys", "", map[string]string{"Origin": "http://" + self, "Sec-Fetch-Site": "same-origin"}, 200},
		{"a CLI client reindexes", "POST", "/tool-rag/reindex", "", nil, 200},
		{"a CLI client reads health", "GET", "/tool-rag/health", "", nil, 200},
	}
	for _, tc := range cases {
		req, err := http.NewRequest(tc.method, g.base+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range tc.hdr {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.want && !(tc.want == 200 && resp.StatusCode < 300) {
			t.Errorf("%s: %s %s → %d %s, want %d", tc.name, tc.method, tc.path, resp.StatusCode, b, tc.want)
		}
	}
}

// TestRedTeam2MetricsAdminOnly (finding 11): /tool-rag/metrics gave the
// whole gateway's call counts (per method and tool, every key's) to any
// key. Now only an admin key reads them; another key gets 403.
func TestRedTeam2MetricsAdminOnly(t *testing.T) {
	keys := "keys:\n  - id: admin\n    secret: \"sekret-rt2-admin\"\n    admin: true\n    servers: {echo: {}}\n" +
		"  - id: agent\n    secret: \"sekret-rt2-agent\"\n    servers: {echo: {tool_prefixes: [\"*\"]}}\n"
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys})
	for _, accept := range []string{"", "text/plain"} {
		code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/metrics", "sekret-rt2-agent", "", map[string]string{"Accept": accept})
		if code != http.StatusForbidden || strings.Contains(body, "mcp_requests_total") {
			t.Errorf("metrics (Accept %q) with a non-admin key: %d %.200s, want 403", accept, code, body)
		}
		if code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/metrics", "sekret-rt2-admin", "", map[string]string{"Accept": accept}); code != 200 {
			t.Errorf("metrics (Accept %q) with the admin key: %d %.200s", accept, code, body)
		}
	}
}

// TestRedTeam2ToolNameRules (finding 11): a tool named
// `<img src=x onerror=alert(1)>` was stored, listed and callable. A sync
// now refuses tool names outside the MCP rules ([A-Za-z0-9_.-], 1 to 128
// characters), keeps the server's other tools, and reports the refusal
// for that server in the sync report and the admin's /tool-rag/health.
func TestRedTeam2ToolNameRules(t *testing.T) {
	s := server.NewMCPServer("hostile", "1.0.0", server.WithToolCapabilities(false))
	for _, name := range []string{"fine.tool-1", "<img src=x onerror=alert(1)>", "two words", "caf\u00e9", strings.Repeat("x", 129)} {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("A tool of the hostile server.")),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ran"), nil
			})
	}
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	keys := "keys:\n  - id: admin\n    secret: \"sekret-rt2-admin\"\n    admin: true\n    servers: {hostile: {}}\n"
	g := startGateway(t, gwOpts{Registry: "servers:\n  hostile:\n    transport: streamable_http\n    url: " + srv.URL + "/mcp\n", Keys: keys, NoSync: true})
	rep, err := g.g.Sync(context.Background(), indexer.ModeFull)
	if err != nil {
		t.Fatal(err)
	}
	got := toolStatus(t, g.g)
	if _, ok := got["hostile__fine.tool-1"]; !ok || len(got) != 1 {
		t.Errorf("catalog after sync: %v, want only hostile__fine.tool-1", got)
	}
	reason := rep.Refused["hostile"]
	if !strings.Contains(reason, "4 tool(s) refused") || !strings.Contains(reason, `tool "<img src=x onerror=alert(1)>": the name breaks the MCP tool name rules`) {
		t.Errorf("sync report's refusal for hostile: %q", reason)
	}
	code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/health", "sekret-rt2-admin", "", nil)
	if code != 200 || !strings.Contains(body, "breaks the MCP tool name rules") {
		t.Errorf("health does not report the refused tools: %d %.500s", code, body)
	}
	c := connect(t, g.url, "sekret-rt2-admin", false, nil)
	res, err := c.CallTool(context.Background(), mcp.CallToolRequest{Params: mcp.CallToolParams{Name: "hostile__<img src=x onerror=alert(1)>"}})
	if err == nil && !res.IsError {
		t.Errorf("the hostile tool is callable: %+v", res)
	}
}

// TestRedTeam2RetrievalWork (finding 7): one find_tools or POST
// /tool-rag/retrieve of 8 queries × 2,000 characters × top_k 50 cost ~50
// normal queries of CPU for one rate-limit token. Now the queries of a
// request share 4,000 characters (refused beyond, with the limit named),
// and each query costs one token of the key, so a key's rate buys the
// same work however it is packed.
func TestRedTeam2RetrievalWork(t *testing.T) {
	keys := "keys:\n  - id: admin\n    secret: \"sekret-rt2-admin\"\n    admin: true\n    servers: {echo: {}}\n" +
		"  - id: priced\n    secret: \"sekret-rt2-priced\"\n    servers: {echo: {}}\n    rate_limit: {rate: 0.01, burst: 4}\n"
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys})
	long := make([]any, 8)
	longJSON := make([]string, 8)
	for i := range long {
		q := strings.Repeat("echo the text back ", 110)[:1999] + string(rune('a'+i)) // distinct
		long[i] = q
		longJSON[i] = `"` + q + `"`
	}
	c := connect(t, g.url, "sekret-rt2-admin", false, nil)
	res, err := testenvCall(c, "find_tools", map[string]any{"queries": long, "top_k": 50})
	if err != nil {
		t.Fatal(err)
	}
	if text := resultText(res); !res.IsError || !strings.Contains(text, "characters in all; the limit is 4000") {
		t.Errorf("find_tools with 8 queries of 2,000 characters: error %v %q, want refused naming the limit of 4000", res.IsError, text)
	}
	code, _, body := httpDo(t, nil, "POST", g.base+"/tool-rag/retrieve", "sekret-rt2-admin", `{"queries":[`+strings.Join(longJSON, ",")+`],"top_k":50}`, nil)
	if code != http.StatusBadRequest || !strings.Contains(body, "characters in all; the limit is 4000") {
		t.Errorf("retrieve with 8 queries of 2,000 characters: %d %.300s, want 400 naming the limit", code, body)
	}
	// burst 4: three queries cost three tokens, so the second request of
	// three finds one token left and is refused, naming the price.
	three := `{"queries":["echo text","reverse a string","add numbers"]}`
	if code, _, body := httpDo(t, nil, "POST", g.base+"/tool-rag/retrieve", "sekret-rt2-priced", three, nil); code != 200 {
		t.Fatalf("first request of three queries: %d %.300s", code, body)
	}
	code, hdr, body := httpDo(t, nil, "POST", g.base+"/tool-rag/retrieve", "sekret-rt2-priced", three, nil)
	if code != http.StatusTooManyRequests || !strings.Contains(body, "each query costs one of the key's rate-limit tokens") || hdr.Get("Retry-After") == "" {
		t.Errorf("second request of three queries with one token left: %d %q %.300s, want 429 naming the price", code, hdr.Get("Retry-After"), body)
	}
}

func testenvCall(c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return testenv.CallTool(c, 30*time.Second, name, args)
}

// resultText joins the text contents of a tool result.
func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
