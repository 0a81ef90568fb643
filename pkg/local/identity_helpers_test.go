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
	"strings"
	"sync/atomic"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// startGatewayWith runs a real local gateway with the registry and keys
// given (the keys are written as they are).
func startGatewayWith(t testing.TB, registry, keys string, vars map[string]string) *env {
	t.Helper()
	vals := testenv.LocalGatewayEnv(t, registry, keys, vars)
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
