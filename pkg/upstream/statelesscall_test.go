package upstream

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// wireTap runs servers/echo behind `tee`, which copies every line the
// gateway writes to the process into a file; it returns the config and a
// function that reads the lines written so far.
func wireTap(t *testing.T) (ServerConfig, func() []map[string]any) {
	t.Helper()
	dir := t.TempDir()
	wire := filepath.Join(dir, "wire.jsonl")
	script := filepath.Join(dir, "tap.sh")
	if err := os.WriteFile(script, []byte("#!/bin/sh\ntee -a \"$1\" | \"$2\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	read := func() []map[string]any {
		f, err := os.Open(wire)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []map[string]any
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("the gateway wrote a line that is not JSON: %q: %v", sc.Text(), err)
			}
			out = append(out, m)
		}
		return out
	}
	return ServerConfig{Transport: TransportStdio, Command: script, Args: []string{wire, echoBin}}, read
}

func byMethod(lines []map[string]any, method string) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		if l["method"] == method {
			out = append(out, l)
		}
	}
	return out
}

func metaOf(t *testing.T, req map[string]any) map[string]any {
	t.Helper()
	params, _ := req["params"].(map[string]any)
	meta, ok := params["_meta"].(map[string]any)
	if !ok {
		t.Fatalf("request without _meta: %v", req)
	}
	return meta
}

// The gateway writes tools/call on a 2026-07-28 stdio connection itself
// (mcpfix.StatelessCaller): the request must declare what mcp-go declares on the
// same connection (its server/discover request), keep the call's own _meta
// (progress token, log level) and reach the tool with its arguments.
func TestStatelessCallWire(t *testing.T) {
	cfg, wire := wireTap(t)
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"echo": cfg})

	var logs []mcp.LoggingMessageNotification
	ctx := WithRelay(ctxT(t, 20*time.Second), Relay{LogLevel: mcp.LoggingLevelDebug, Log: func(n mcp.LoggingMessageNotification) { logs = append(logs, n) }})
	ctx = WithProgress(ctx, func(float64, float64, string) {})
	res, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": "a \"quoted\" ünïcode text"})
	if err != nil {
		t.Fatal(err)
	}
	if got := res.Content[0].(mcp.TextContent).Text; got != "a \"quoted\" ünïcode text" {
		t.Fatalf("result %q", got)
	}
	info, err := m.Info(ctx, "echo")
	if err != nil || info.ProtocolVersion != mcp.LATEST_PROTOCOL_VERSION {
		t.Fatalf("protocol %q, %v; this test is about %s", info.ProtocolVersion, err, mcp.LATEST_PROTOCOL_VERSION)
	}

	// tee writes to the process before it writes to the file: wait for the
	// file to hold the call the process has already answered.
	var lines, discover, calls []map[string]any
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		lines = wire()
		discover, calls = byMethod(lines, string(mcp.MethodServerDiscover)), byMethod(lines, string(mcp.MethodToolsCall))
		if len(calls) >= 1 || time.Now().After(deadline) {
			break
		}
	}
	if len(discover) != 1 || len(calls) != 1 {
		t.Fatalf("want 1 server/discover and 1 tools/call on the wire, got %d and %d: %v", len(discover), len(calls), lines)
	}
	want, got := metaOf(t, discover[0]), metaOf(t, calls[0])
	for _, k := range []string{mcp.MetaKeyProtocolVersion, mcp.MetaKeyClientInfo, mcp.MetaKeyClientCapabilities} {
		if want[k] == nil || !reflect.DeepEqual(got[k], want[k]) {
			t.Errorf("_meta %s: tools/call says %v, mcp-go's server/discover says %v", k, got[k], want[k])
		}
	}
	if tok, _ := got["progressToken"].(string); !strings.HasPrefix(tok, "toolrag-") {
		t.Errorf("progress token lost: _meta %v", got)
	}
	if got[mcp.MetaKeyLogLevel] != string(mcp.LoggingLevelDebug) {
		t.Errorf("log level lost: _meta %v", got)
	}
	params := calls[0]["params"].(map[string]any)
	if params["name"] != "echo" || !reflect.DeepEqual(params["arguments"], map[string]any{"text": "a \"quoted\" ünïcode text"}) {
		t.Errorf("params %v", params)
	}
	if len(params) != 3 {
		t.Errorf("params carry more than _meta, name and arguments: %v", params)
	}
}

// A call whose caller gives up is cancelled on the wire, as mcp-go does
// over stdio, with the id the request went out with.
func TestStatelessCallCancel(t *testing.T) {
	cfg, wire := wireTap(t)
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"echo": cfg})
	if err := m.Ping(ctxT(t, 20*time.Second), "echo"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	if _, err := m.CallTool(ctx, "echo", "sleep", map[string]any{"ms": 5000}); err == nil {
		t.Fatal("a 5 s sleep answered within 300 ms")
	}
	var lines []map[string]any
	testenv.Eventually(t, 5*time.Second, "notifications/cancelled on the wire", func() bool {
		lines = wire()
		return len(byMethod(lines, string(mcp.MethodNotificationCancelled))) == 1
	})
	call := byMethod(lines, string(mcp.MethodToolsCall))[0]
	n := byMethod(lines, string(mcp.MethodNotificationCancelled))[0]
	if id := n["params"].(map[string]any)["requestId"]; id == nil || id != call["id"] {
		t.Errorf("cancelled %v, the call's id is %v", id, call["id"])
	}
}

// TestStatelessCallHTTPHeaders checks the fast path over Streamable HTTP:
// each tools/call carries the headers mcp-go's own client sends on
// 2026-07-28 (Mcp-Method, Mcp-Name, and Mcp-Param-* for the parameters a
// listed tool annotates with x-mcp-header), and gets the same result.
func TestStatelessCallHTTPHeaders(t *testing.T) {
	s := mcpserver.NewMCPServer("routed", "1.0.0", mcpserver.WithToolCapabilities(false))
	text := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(req.Params.Name + ":" + req.GetString("text", "") + ":" + req.GetString("region", "")), nil
	}
	s.AddTool(mcp.NewTool("plain", mcp.WithString("text")), text)
	s.AddTool(mcp.NewToolWithRawSchema("routed", "Routed by region.",
		json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"},"text":{"type":"string"}}}`)), text)
	h := mcpserver.NewStreamableHTTPServer(s)
	type seen struct {
		header http.Header
		fast   bool
	}
	var mu sync.Mutex
	var calls []seen
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"method":"tools/call"`)) {
			keep := http.Header{}
			for k, v := range r.Header {
				if strings.HasPrefix(k, "Mcp-") {
					keep[k] = v
				}
			}
			mu.Lock()
			calls = append(calls, seen{keep, bytes.Contains(body, []byte(`"id":"toolrag-`))})
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	ctx := ctxT(t, 60*time.Second)
	args := []map[string]any{{"text": "a"}, {"text": "b", "region": "eu-west"}}
	taken := func() []seen {
		mu.Lock()
		defer mu.Unlock()
		out := calls
		calls = nil
		return out
	}

	// mcp-go's client alone: a call before the listing, the listing, both
	// tools. (Before the listing mcp-go cannot mirror routed's parameter,
	// and the server refuses the call: so does it through the fast path.)
	c, err := client.NewStreamableHttpClient(ts.URL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(ctx, initializeRequest()); err != nil || !mcp.IsModernProtocol(c.ProtocolVersion()) {
		t.Fatalf("initialize: %v (protocol %s)", err, c.ProtocolVersion())
	}
	var want []string
	callMCPGo := func(name string, a map[string]any) {
		req := mcp.CallToolRequest{}
		req.Params.Name, req.Params.Arguments = name, a
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res.Content[0].(mcp.TextContent).Text)
	}
	callMCPGo("plain", args[0])
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	callMCPGo("plain", args[0])
	callMCPGo("routed", args[1])
	mcpgo := taken()

	// The same through the Manager (the fast path).
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"r": {Transport: TransportStreamableHTTP, URL: ts.URL}})
	var got []string
	callFast := func(name string, a map[string]any) {
		res, err := m.CallTool(ctx, "r", name, a)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, res.Content[0].(mcp.TextContent).Text)
	}
	callFast("plain", args[0])
	if _, err := m.ListTools(ctx, "r"); err != nil {
		t.Fatal(err)
	}
	callFast("plain", args[0])
	callFast("routed", args[1])
	fast := taken()

	if len(fast) != 3 || len(mcpgo) != 3 {
		t.Fatalf("%d and %d calls seen, want 3 each", len(fast), len(mcpgo))
	}
	for i := range fast {
		if !fast[i].fast {
			t.Errorf("call %d did not take the fast path", i)
		}
		if got[i] != want[i] {
			t.Errorf("call %d: result %q, mcp-go's %q", i, got[i], want[i])
		}
		if !reflect.DeepEqual(fast[i].header, mcpgo[i].header) {
			t.Errorf("call %d: headers %v, mcp-go sends %v", i, fast[i].header, mcpgo[i].header)
		}
	}
	if mcpgo[2].header.Get("Mcp-Param-Region") != "eu-west" || mcpgo[1].header.Get("Mcp-Param-Region") != "" {
		t.Errorf("mcp-go's headers are not what this test expects: %v", mcpgo)
	}
}
