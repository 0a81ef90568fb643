package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// fuzzMaxBody is the body limit of the fuzzed handler (small so that the
// 413 path is reachable by mutation).
const fuzzMaxBody = 16 << 10

const fuzzKeys = `keys:
  - id: admin
    secret: "fz-admin-secret"
    admin: true
    servers: {alpha: {}, beta: {}}
  - id: agent
    secret: "fz-agent-secret"
    servers: {alpha: {}}
`

// fuzzEntry is the full HTTP chain of the gateway: auth.Middleware with
// static keys in front of gateway.Handler, over a SQLite catalog synced from
// two in-process Streamable HTTP upstreams ("alpha", granted to the agent
// key, and "beta", granted only to admin).
type fuzzEntry struct {
	handler http.Handler
	reached atomic.Int64 // requests that got past auth
	session string       // a legacy session initialised with the agent key
}

// upstreamServer is a small MCP server with tools, a prompt, a resource
// and a resource template.
func upstreamServer() *server.MCPServer {
	s := server.NewMCPServer("fuzz-upstream", "1.0.0",
		server.WithToolCapabilities(false), server.WithPromptCapabilities(false),
		server.WithResourceCapabilities(false, false), server.WithRecovery())
	s.AddTool(mcp.NewTool("echo", mcp.WithDescription("Return the given text."),
		mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	s.AddTool(mcp.NewTool("add", mcp.WithDescription("Add two numbers."),
		mcp.WithNumber("a", mcp.Required()), mcp.WithNumber("b", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(fmt.Sprint(req.GetFloat("a", 0) + req.GetFloat("b", 0))), nil
		})
	s.AddTool(mcp.NewTool("fail", mcp.WithDescription("Return a tool error."),
		mcp.WithString("message")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultError(req.GetString("message", "failed")), nil
		})
	s.AddPrompt(mcp.NewPrompt("greeting", mcp.WithArgument("name")),
		func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return mcp.NewGetPromptResult("hi", []mcp.PromptMessage{
				mcp.NewPromptMessage(mcp.RoleUser, mcp.NewTextContent("hello "+req.Params.Arguments["name"])),
			}), nil
		})
	s.AddResource(mcp.NewResource("up://info", "info"),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: "up://info", Text: "info"}}, nil
		})
	s.AddResourceTemplate(mcp.NewResourceTemplate("up://items/{id}", "item"),
		func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
			return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, Text: "item"}}, nil
		})
	return s
}

// newTestGateway serves s as two upstreams, "alpha" (granted to the agent
// key of fuzzKeys) and "beta" (admin only), syncs them into a fresh store
// and returns the gateway's MCP handler behind auth. wrap, when not nil,
// wraps the gateway's handler inside auth.
func newTestGateway(tb testing.TB, s *server.MCPServer, callTimeout time.Duration, o gateway.HTTPOptions, wrap func(http.Handler) http.Handler) http.Handler {
	return newTestGatewayWith(tb, s, callTimeout, o, wrap, nil)
}

// newTestGatewayWith is newTestGateway with the gateway's Config adjusted
// by cfg (when not nil) before gateway.New.
func newTestGatewayWith(tb testing.TB, s *server.MCPServer, callTimeout time.Duration, o gateway.HTTPOptions, wrap func(http.Handler) http.Handler, cfg func(*gateway.Config)) http.Handler {
	tb.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	mgr, st, rt := syncedCatalog(tb, s, callTimeout)
	sessions := session.NewMemory()
	gc := gateway.Config{Catalog: st, Upstreams: mgr, Retriever: rt, Sessions: sessions, Logger: log}
	if cfg != nil {
		cfg(&gc)
	}
	gw, err := gateway.New(gc)
	if err != nil {
		tb.Fatal(err)
	}
	if err := gw.Reload(ctx); err != nil {
		tb.Fatal(err)
	}
	keys, err := config.ParseKeys("keys.yaml", []byte(fuzzKeys))
	if err != nil {
		tb.Fatal(err)
	}
	o.SessionIDs = session.NewIDManager(sessions, time.Hour)
	h := gw.Handler(o)
	if wrap != nil {
		h = wrap(h)
	}
	return auth.Middleware(auth.Config{Keys: auth.NewStaticKeys(keys)}, h)
}

func newFuzzEntry(f testing.TB) *fuzzEntry {
	f.Helper()
	e := &fuzzEntry{}
	e.handler = newTestGateway(f, upstreamServer(), 5*time.Second, gateway.HTTPOptions{MaxBodyBytes: fuzzMaxBody},
		func(inner http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				e.reached.Add(1)
				inner.ServeHTTP(w, r)
			})
		})

	// A legacy session for inputs that continue one.
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + mcp.LATEST_LEGACY_PROTOCOL_VERSION +
		`","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}`
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/mcp", strings.NewReader(init))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer fz-agent-secret")
	e.handler.ServeHTTP(rec, req)
	e.session = rec.Header().Get("Mcp-Session-Id")
	if rec.Code != 200 || e.session == "" {
		f.Fatalf("initialize: %d %q", rec.Code, rec.Body.String())
	}
	return e
}

// setStandardHeaders sets the Mcp-Method and Mcp-Name headers that
// 2026-07-28 requests carry, from the body.
func setStandardHeaders(req *http.Request, body []byte) {
	var head struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
			URI  string `json:"uri"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &head) != nil || head.Method == "" {
		return
	}
	req.Header.Set("Mcp-Method", head.Method)
	if name := head.Params.Name + head.Params.URI; name != "" {
		req.Header.Set("Mcp-Name", name)
	}
}

// fuzzMode decodes the header choices packed into one byte.
type fuzzMode struct {
	auth    int // 0 none, 1 agent key, 2 admin key, 3 "Bearer "+extra
	proto   int // MCP-Protocol-Version: 0 none, 1 latest, 2 legacy, 3 extra
	session int // Mcp-Session-Id: 0 none, 1 the initialised session, 2 extra, 3 none
	plain   bool
}

func decodeMode(m byte) fuzzMode {
	return fuzzMode{auth: int(m & 3), proto: int(m>>2) & 3, session: int(m>>4) & 3, plain: m&64 != 0}
}

// FuzzMCPEntry feeds arbitrary bodies and headers to the authenticated MCP
// endpoint. It must never panic or answer 5xx; unauthenticated requests
// always get 401 without reaching mcp-go; malformed JSON gets a JSON-RPC
// error; the agent key never sees the ungranted server "beta".
func FuzzMCPEntry(f *testing.F) {
	e := newFuzzEntry(f)
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`), byte(1|1<<2), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"add numbers"}}}`), byte(1|2<<2|1<<4), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"alpha__echo","arguments":{"text":"x"}}}}`), byte(2|1<<2), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":`), byte(1), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":5,"method":"ping"}`), byte(0), "")
	f.Add([]byte(`{"jsonrpc":"2.0","id":6,"method":"ping"}`), byte(3), "fz-agent-secreT")
	f.Fuzz(func(t *testing.T, body []byte, mode byte, extra string) {
		m := decodeMode(mode)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		req := httptest.NewRequestWithContext(ctx, "POST", "/mcp", bytes.NewReader(body))
		if m.plain {
			req.Header.Set("Content-Type", "text/plain")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("Accept", "application/json, text/event-stream")
		authed := false
		asAgent := false
		switch m.auth {
		case 1:
			req.Header.Set("Authorization", "Bearer fz-agent-secret")
			authed, asAgent = true, true
		case 2:
			req.Header.Set("Authorization", "Bearer fz-admin-secret")
			authed = true
		case 3:
			req.Header.Set("Authorization", "Bearer "+extra)
			switch strings.TrimSpace(extra) {
			case "fz-agent-secret":
				authed, asAgent = true, true
			case "fz-admin-secret":
				authed = true
			}
		}
		switch m.proto {
		case 1:
			req.Header.Set("MCP-Protocol-Version", mcp.LATEST_PROTOCOL_VERSION)
			setStandardHeaders(req, body)
		case 2:
			req.Header.Set("MCP-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		case 3:
			req.Header.Set("MCP-Protocol-Version", extra)
		}
		switch m.session {
		case 1:
			req.Header.Set("Mcp-Session-Id", e.session)
		case 2:
			req.Header.Set("Mcp-Session-Id", extra)
		}

		before := e.reached.Load()
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		reached := e.reached.Load() != before
		code := rec.Code
		out := rec.Body.Bytes()

		if code < 100 || code > 599 {
			t.Fatalf("invalid HTTP status %d", code)
		}
		if code >= 500 {
			t.Fatalf("client input answered with %d: %s", code, out)
		}
		if !authed {
			if code != http.StatusUnauthorized || reached {
				t.Fatalf("unauthenticated request: status %d, reached mcp-go %v", code, reached)
			}
			if !strings.HasPrefix(rec.Header().Get("WWW-Authenticate"), "Bearer") {
				t.Fatal("401 without a Bearer WWW-Authenticate challenge")
			}
			return
		}
		if code == http.StatusUnauthorized {
			t.Fatalf("valid key rejected: %s", out)
		}
		ct := rec.Header().Get("Content-Type")
		switch {
		case strings.HasPrefix(ct, "application/json") && len(bytes.TrimSpace(out)) > 0:
			if !json.Valid(out) {
				t.Fatalf("application/json response is not JSON: %q", out)
			}
		case strings.HasPrefix(ct, "text/event-stream"):
			for _, line := range strings.Split(string(out), "\n") {
				if data, ok := strings.CutPrefix(line, "data: "); ok && !json.Valid([]byte(data)) {
					t.Fatalf("SSE event is not JSON: %q", data)
				}
			}
		}
		if !m.plain && !json.Valid(body) {
			var rpc struct {
				JSONRPC string `json:"jsonrpc"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(out, &rpc); err != nil || rpc.JSONRPC != "2.0" || rpc.Error == nil || rpc.Error.Message == "" {
				t.Fatalf("malformed JSON body answered %d without a JSON-RPC error: %q", code, out)
			}
			if rpc.Error.Code != -32700 && rpc.Error.Code != -32600 {
				t.Fatalf("malformed JSON body: error code %d, want -32700 (parse error) or -32600 (limit)", rpc.Error.Code)
			}
		}
		// The agent key is granted alpha only: nothing of beta may appear in
		// a response unless the request itself named it.
		if asAgent && !bytes.Contains(bytes.ToLower(body), []byte("beta")) && !bytes.Contains(body, []byte(`\u`)) &&
			!strings.Contains(strings.ToLower(extra), "beta") && bytes.Contains(out, []byte("beta")) {
			t.Fatalf("agent response leaks the ungranted server beta: %s", out)
		}
	})
}

// TestMCPEntryHarness checks that the fuzz harness reaches the interesting
// paths (so a broken setup cannot make the fuzz target vacuous).
func TestMCPEntryHarness(t *testing.T) {
	e := newFuzzEntry(t)
	// modern wraps a request in the 2026-07-28 form (protocol version in
	// _meta and headers); legacy requests continue the initialised session.
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION +
		`","io.modelcontextprotocol/clientInfo":{"name":"fuzz","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	call := func(name string, args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + name + `","arguments":` + args + `,` + meta + `}}`
	}
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + meta + `}}`
	cases := []struct {
		name, body, auth string
		code             int
		want, not        string
	}{
		{"no key", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "", 401, "Authorization", ""},
		{"wrong key", `{"jsonrpc":"2.0","id":1,"method":"ping"}`, "Bearer nope", 401, "invalid API key", ""},
		{"admin lists both servers", list, "Bearer fz-admin-secret", 200, "beta__echo", ""},
		{"agent lists meta-tools only", list, "Bearer fz-agent-secret", 200, "find_tools", "alpha__echo"},
		{"agent run_tool", call("run_tool", `{"call_name":"alpha__echo","arguments":{"text":"zebra"}}`), "Bearer fz-agent-secret", 200, "zebra", ""},
		{"agent run_tool ungranted", call("run_tool", `{"call_name":"beta__echo","arguments":{"text":"zebra"}}`), "Bearer fz-agent-secret", 200, "not found", "zebra"},
		{"agent find_tools", call("find_tools", `{"query":"add two numbers"}`), "Bearer fz-agent-secret", 200, "alpha__add", "beta__"},
		{"parse error", `{"jsonrpc":`, "Bearer fz-agent-secret", 400, "-32700", ""},
		{"too large", `{"x":"` + strings.Repeat("a", fuzzMaxBody) + `"}`, "Bearer fz-agent-secret", 413, "MCP_GATEWAY_MAX_BODY_BYTES", ""},
		{"too deep", strings.Repeat("[", 65) + strings.Repeat("]", 65), "Bearer fz-agent-secret", 400, "limit is 64", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(c.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("MCP-Protocol-Version", mcp.LATEST_PROTOCOL_VERSION)
			setStandardHeaders(req, []byte(c.body))
			if c.auth != "" {
				req.Header.Set("Authorization", c.auth)
			}
			rec := httptest.NewRecorder()
			e.handler.ServeHTTP(rec, req)
			got := rec.Body.String()
			if rec.Code != c.code || !strings.Contains(got, c.want) || (c.not != "" && strings.Contains(got, c.not)) {
				t.Errorf("status %d body %s; want %d containing %q and not %q", rec.Code, got, c.code, c.want, c.not)
			}
		})
	}
}

// syncedCatalog serves s over Streamable HTTP as the upstreams "alpha"
// and "beta" and syncs their tools into a SQLite catalog: the upstream
// manager, the catalog and a retriever over it.
func syncedCatalog(tb testing.TB, s *server.MCPServer, callTimeout time.Duration) (*upstream.Manager, *sqlite.Store, *retrieve.Retriever) {
	tb.Helper()
	return syncedCatalogOf(tb, server.NewStreamableHTTPServer(s), callTimeout)
}

// syncedCatalogOf is syncedCatalog for an upstream's HTTP handler.
func syncedCatalogOf(tb testing.TB, h http.Handler, callTimeout time.Duration) (*upstream.Manager, *sqlite.Store, *retrieve.Retriever) {
	tb.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	up := httptest.NewServer(h)
	tb.Cleanup(up.Close)
	mgr := upstream.NewManager(upstream.Options{CallTimeout: callTimeout, Logger: log})
	tb.Cleanup(func() { mgr.Close() })
	mgr.SetServers(map[string]upstream.ServerConfig{
		"alpha": {Transport: upstream.TransportStreamableHTTP, URL: up.URL + "/mcp"},
		"beta":  {Transport: upstream.TransportStreamableHTTP, URL: up.URL + "/mcp"},
	})
	st, err := sqlite.Open(ctx, filepath.Join(tb.TempDir(), "tools.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	if rep, err := syncer.Run(ctx, syncer.Config{Upstreams: mgr, Store: st, Logger: log}); err != nil || rep.Synced != 2 {
		tb.Fatalf("sync: %v %+v", err, rep)
	}
	rt, err := retrieve.New(retrieve.Config{Tools: st, Logger: log})
	if err != nil {
		tb.Fatal(err)
	}
	return mgr, st, rt
}
