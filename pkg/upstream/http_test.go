package upstream

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

type headerKey struct{}

// goHTTPServer is an in-process mcp-go Streamable HTTP server with tools
// for header pass-through, size and timeout tests. dropNext makes the next
// request for a method have its connection closed after the request was
// read (the server never answers), counting how often that method arrived.
type goHTTPServer struct {
	*httptest.Server
	hits     map[string]*atomic.Int32
	dropNext map[string]*atomic.Bool
}

func newGoHTTPServer(t *testing.T) *goHTTPServer {
	t.Helper()
	s := mcpserver.NewMCPServer("go-http", "2.0.0", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("whoami"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		h, _ := ctx.Value(headerKey{}).(http.Header)
		return mcp.NewToolResultText(h.Get("Authorization") + "|" + h.Get("X-Tenant")), nil
	})
	s.AddTool(mcp.NewTool("big", mcp.WithNumber("bytes")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(strings.Repeat("y", req.GetInt("bytes", 0))), nil
	})
	s.AddTool(mcp.NewTool("sleep", mcp.WithNumber("ms")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-time.After(time.Duration(req.GetInt("ms", 0)) * time.Millisecond):
			return mcp.NewToolResultText("done"), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	h := mcpserver.NewStreamableHTTPServer(s, mcpserver.WithHTTPContextFunc(func(ctx context.Context, r *http.Request) context.Context {
		return context.WithValue(ctx, headerKey{}, r.Header.Clone())
	}))
	g := &goHTTPServer{hits: map[string]*atomic.Int32{}, dropNext: map[string]*atomic.Bool{}}
	for _, m := range []string{"tools/call", "tools/list"} {
		g.hits[m] = &atomic.Int32{}
		g.dropNext[m] = &atomic.Bool{}
	}
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		for m, n := range g.hits {
			if bytes.Contains(body, []byte(`"method":"`+m+`"`)) {
				n.Add(1)
				if g.dropNext[m].CompareAndSwap(true, false) {
					conn, _, err := w.(http.Hijacker).Hijack()
					if err == nil {
						conn.Close()
					}
					return
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

func TestHTTPGoServer(t *testing.T) {
	g := newGoHTTPServer(t)
	m, _ := newTestManager(t, Options{CallTimeout: 300 * time.Millisecond, MaxResultBytes: 64 << 10})
	m.SetServers(map[string]ServerConfig{"go": {
		Transport: TransportStreamableHTTP, URL: g.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer t0k", "X-Tenant": "acme"},
	}})
	ctx := ctxT(t, 30*time.Second)

	info, err := m.Info(ctx, "go")
	if err != nil || info.Name != "go-http" || info.Version != "2.0.0" {
		t.Fatalf("Info = %+v, %v", info, err)
	}
	if err := m.Ping(ctx, "go"); err != nil {
		t.Errorf("Ping: %v", err)
	}
	res, err := m.CallTool(ctx, "go", "whoami", nil)
	if err != nil || resultText(t, res) != "Bearer t0k|acme" {
		t.Errorf("headers: %v, %v", res, err)
	}
	// A server without prompts or resources has none; nothing is asked.
	if p, err := m.ListPrompts(ctx, "go"); err != nil || len(p) != 0 {
		t.Errorf("ListPrompts = %v, %v", p, err)
	}
	if r, err := m.ListResources(ctx, "go"); err != nil || len(r) != 0 {
		t.Errorf("ListResources = %v, %v", r, err)
	}

	res, err = m.CallTool(ctx, "go", "big", map[string]any{"bytes": 1000})
	if err != nil || len(resultText(t, res)) != 1000 {
		t.Errorf("small result: %v", err)
	}
	_, err = m.CallTool(ctx, "go", "big", map[string]any{"bytes": 1 << 20})
	if !errors.Is(err, ErrResultTooLarge) || !strings.Contains(err.Error(), `upstream "go": tools/call failed: the server's response`) ||
		!strings.Contains(err.Error(), "larger than the 64 KiB limit") {
		t.Errorf("huge result: %v", err)
	}
	_, err = m.CallTool(ctx, "go", "sleep", map[string]any{"ms": 5000})
	if !errors.Is(err, context.DeadlineExceeded) || err.Error() != `upstream "go": tools/call did not answer within 300ms` {
		t.Errorf("slow call: %v", err)
	}
	if _, err := m.CallTool(ctx, "go", "whoami", nil); err != nil {
		t.Errorf("after the failures: %v", err)
	}
}

// TestHTTPRetryRule checks which failures are retried: a list whose
// connection broke after the request was sent is retried, a tools/call is
// not (the tool may have run).
func TestHTTPRetryRule(t *testing.T) {
	g := newGoHTTPServer(t)
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"go": {Transport: TransportStreamableHTTP, URL: g.URL + "/mcp"}})
	ctx := ctxT(t, 30*time.Second)
	if err := m.Ping(ctx, "go"); err != nil {
		t.Fatal(err)
	}

	g.dropNext["tools/list"].Store(true)
	tools, err := m.ListTools(ctx, "go")
	if err != nil || len(tools) != 3 {
		t.Errorf("ListTools after a dropped connection = %d tools, %v", len(tools), err)
	}
	if n := g.hits["tools/list"].Load(); n != 2 {
		t.Errorf("tools/list reached the server %d times, want 2 (one retry)", n)
	}

	g.dropNext["tools/call"].Store(true)
	_, err = m.CallTool(ctx, "go", "whoami", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `upstream "go": tools/call failed: could not reach `+g.URL+"/mcp") {
		t.Errorf("tools/call on a dropped connection: %v", err)
	}
	if n := g.hits["tools/call"].Load(); n != 1 {
		t.Errorf("tools/call reached the server %d times, want 1 (no retry after it was sent)", n)
	}
	if _, err := m.CallTool(ctx, "go", "whoami", nil); err != nil {
		t.Errorf("the next call: %v", err)
	}

	// Nothing listening: the call was never sent, the error says why.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	m.SetServers(map[string]ServerConfig{"down": {Transport: TransportSSE, URL: "http://" + addr + "/sse"}})
	_, err = m.CallTool(ctx, "down", "x", nil)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `upstream "down": tools/call failed: could not connect to http://`+addr+"/sse") ||
		!strings.Contains(err.Error(), "connection refused") {
		t.Errorf("server down: %v", err)
	}
}

// TestHTTPFailedPostKeepsOtherCalls: on a Streamable HTTP upstream, one
// POST whose connection breaks fails alone; a call in flight on the same
// session is not cancelled, and the session is kept.
func TestHTTPFailedPostKeepsOtherCalls(t *testing.T) {
	g := newGoHTTPServer(t)
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"go": {Transport: TransportStreamableHTTP, URL: g.URL + "/mcp"}})
	ctx := ctxT(t, 30*time.Second)
	if err := m.Ping(ctx, "go"); err != nil {
		t.Fatal(err)
	}
	slow := make(chan error, 1)
	go func() {
		res, err := m.CallTool(ctx, "go", "sleep", map[string]any{"ms": 400})
		if err == nil && resultText(t, res) != "done" {
			err = errors.New("unexpected result " + resultText(t, res))
		}
		slow <- err
	}()
	for g.hits["tools/call"].Load() < 1 {
		time.Sleep(time.Millisecond)
	}
	g.dropNext["tools/call"].Store(true)
	if _, err := m.CallTool(ctx, "go", "whoami", nil); !errors.Is(err, ErrUnavailable) {
		t.Errorf("call on a broken connection: %v, want ErrUnavailable", err)
	}
	if err := <-slow; err != nil {
		t.Errorf("the call in flight meanwhile: %v", err)
	}
	if n := g.hits["tools/call"].Load(); n != 2 {
		t.Errorf("tools/call reached the server %d times, want 2", n)
	}
	if _, err := m.CallTool(ctx, "go", "whoami", nil); err != nil {
		t.Errorf("the next call: %v", err)
	}
}
