package local

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// startGatewayWith runs a real local gateway with the registry and keys
// given (the keys are written as they are).
func startGatewayWith(t testing.TB, registry, keys string, vars map[string]string) *env {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "registry.yaml"), []byte(registry), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys), 0o644); err != nil {
		t.Fatal(err)
	}
	vals := map[string]string{
		"MCP_GATEWAY_CONFIG_DIR":        dir,
		"TOOL_RAG_DB":                   filepath.Join(dir, "tools.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL": "0",
	}
	for k, v := range vars {
		vals[k] = v
	}
	ctx := context.Background()
	g, err := New(ctx, Options{Getenv: func(k string) string { return vals[k] }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if _, err := g.Sync(ctx, indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler)
	t.Cleanup(srv.Close)
	return &env{g: g, srv: srv, url: srv.URL + "/mcp"}
}

// rawSession speaks JSON-RPC to the gateway byte for byte, so a test sees
// exactly the error object the gateway wrote.
type rawSession struct {
	t        testing.TB
	url, key string
	sid      string
	ids      atomic.Int64
}

// rawConnect opens a 2025-11-25 session whose client declares caps.
func rawConnect(t testing.TB, url, key string, caps map[string]any) *rawSession {
	t.Helper()
	s := &rawSession{t: t, url: url, key: key}
	msg := s.request("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "raw", "version": "1"},
	})
	if msg["error"] != nil {
		t.Fatalf("initialize: %v", msg["error"])
	}
	s.notify("notifications/initialized")
	return s
}

func (s *rawSession) post(body any) (*http.Response, []byte) {
	s.t.Helper()
	b, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, s.url, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+s.key)
	req.Header.Set("MCP-Protocol-Version", "2025-11-25")
	if s.sid != "" {
		req.Header.Set("Mcp-Session-Id", s.sid)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	if sid := resp.Header.Get("Mcp-Session-Id"); sid != "" {
		s.sid = sid
	}
	return resp, out
}

func (s *rawSession) notify(method string) {
	s.post(map[string]any{"jsonrpc": "2.0", "method": method})
}

// request sends one request and returns its response message (from a
// JSON body or the SSE stream of the POST).
func (s *rawSession) request(method string, params any) map[string]any {
	s.t.Helper()
	id := s.ids.Add(1)
	resp, body := s.post(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	var frames [][]byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
				frames = append(frames, []byte(strings.TrimSpace(d)))
			}
		}
	} else {
		frames = [][]byte{body}
	}
	for _, f := range frames {
		var m map[string]any
		if json.Unmarshal(f, &m) == nil && m["id"] != nil && fmt.Sprint(m["id"]) == fmt.Sprint(id) {
			return m
		}
	}
	s.t.Fatalf("%s: no response in %d %q", method, resp.StatusCode, body)
	return nil
}

// callTool calls a tool and returns the response message.
func (s *rawSession) callTool(name string, args map[string]any) map[string]any {
	s.t.Helper()
	return s.request("tools/call", map[string]any{"name": name, "arguments": args})
}

// errorUpstream is a real mcp-go Streamable HTTP server whose tools fail
// with JSON-RPC errors of their own: needs_link with a -32042 URL
// elicitation, quota with -32099 and data (answered by a handler in front
// of mcp-go, which has no way to send other codes with data).
func errorUpstream(t testing.TB) string {
	t.Helper()
	s := server.NewMCPServer("errors", "1")
	for _, name := range []string{"needs_link", "quota"} {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("fails with a JSON-RPC error: "+name)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("unreachable"), nil
			})
	}
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
			switch m.Params.Name {
			case "quota":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32099,"message":"quota exhausted","data":{"retry_after":7,"plan":"free"}}}`, m.ID)
				return
			case "needs_link":
				// as a 2025-11-25 server answers (mcp-go reserves -32042
				// on the 2026-07-28 protocol the gateway negotiates)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"This request requires more information.","data":{"elicitations":[{"mode":"url","elicitationId":"el-1","url":"https://upstream.example/connect?x=1","message":"Authorize access to your files"}]}}}`, m.ID)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// whoUpstream is a real mcp-go Streamable HTTP server that authenticates
// every request with a bearer token (401 with a WWW-Authenticate challenge
// otherwise) and whose whoami tool answers with the caller's subject.
type whoUpstream struct {
	URL    string
	mu     sync.Mutex
	tokens map[string]string // bearer → subject
	check  func(tok string) (string, bool)
	calls  map[string]int // subject → whoami calls
	issuer string         // set: serve RFC 9728 metadata naming it
}

type subKey struct{}

func newWhoUpstream(t testing.TB, tokens map[string]string) *whoUpstream {
	t.Helper()
	u := &whoUpstream{tokens: tokens, calls: map[string]int{}}
	s := server.NewMCPServer("who", "1")
	s.AddTool(mcp.NewTool("whoami", mcp.WithDescription("who am i: tell the identity of the caller at this server")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			sub, _ := ctx.Value(subKey{}).(string)
			u.mu.Lock()
			u.calls[sub]++
			u.mu.Unlock()
			return mcp.NewToolResultText("sub=" + sub), nil
		})
	h := server.NewStreamableHTTPServer(s, server.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		sub, _ := u.subject(r)
		return context.WithValue(ctx, subKey{}, sub)
	}))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") && u.issuer != "" {
			w.Header().Set("Content-Type", "application/json")
			json.NewEncoder(w).Encode(map[string]any{"resource": u.URL + "/mcp", "authorization_servers": []string{u.issuer}})
			return
		}
		if _, ok := u.subject(r); !ok {
			w.Header().Set("WWW-Authenticate", `Bearer error="invalid_token", resource_metadata="`+u.URL+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

func (u *whoUpstream) subject(r *http.Request) (string, bool) {
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	if !ok || tok == "" {
		return "", false
	}
	if u.check != nil {
		return u.check(tok)
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	sub, ok := u.tokens[tok]
	return sub, ok
}

func (u *whoUpstream) revoke(tok string) {
	u.mu.Lock()
	delete(u.tokens, tok)
	u.mu.Unlock()
}

// resultText returns the text of a tools/call response's result.
func resultTextOf(msg map[string]any) (text string, isError bool) {
	res, _ := msg["result"].(map[string]any)
	if res == nil {
		return "", true
	}
	var parts []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n"), res["isError"] == true
}

// elicitationURL returns the URL of a -32042 error response ("" if it is not one).
func elicitationURL(msg map[string]any) string {
	e, _ := msg["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32042) {
		return ""
	}
	data, _ := e["data"].(map[string]any)
	els, _ := data["elicitations"].([]any)
	if len(els) != 1 {
		return ""
	}
	el, _ := els[0].(map[string]any)
	if el["mode"] != "url" || el["elicitationId"] == "" {
		return ""
	}
	u, _ := el["url"].(string)
	return u
}

// postForm posts a form to a connect link (no redirects followed).
func postForm(t testing.TB, link string, form url.Values) (int, string) {
	t.Helper()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(link, form)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// restJSON calls the gateway's REST API with a key.
func restJSON(t testing.TB, method, u, key string) (int, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest(method, u, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
