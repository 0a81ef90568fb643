package gateway

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// A tool whose schema carries an invalid x-mcp-header annotation makes
// mcp-go panic when it is registered. Reload must survive it: the tool is
// left out of the MCP tool list and stays reachable through run_tool.
func TestReloadSurvivesInvalidHeaderAnnotations(t *testing.T) {
	ctx := context.Background()
	st := tempCatalog(t)
	bad := catalog.Tool{Server: "srv", Name: "bad", Description: "bad header annotation",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object","x-mcp-header":"X-Obj"}}}`)}
	// The same annotation behind a JSON escape in its name: a filter on the
	// raw text must not let it through to mcp-go.
	escaped := catalog.Tool{Server: "srv", Name: "escaped", Description: "bad header annotation, escaped name",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"o":{"type":"object","x\u002dmcp-header":"X-Obj"}}}`)}
	good := catalog.Tool{Server: "srv", Name: "good", Description: "fine",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"}}}`)}
	putTools(t, st, "srv", bad, escaped, good)
	up := &callRecorder{}
	r, err := retrieve.New(retrieve.Config{Tools: st})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Config{Catalog: st, Upstreams: up, Retriever: r, Sessions: session.NewMemory(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Reload(ctx); err != nil { // must not panic
		t.Fatal(err)
	}
	listed := g.MCPServer().ListTools()
	for _, name := range []string{"srv__bad", "srv__escaped"} {
		if _, ok := listed[name]; ok {
			t.Errorf("%s, with an invalid annotation, was registered", name)
		}
	}
	if _, ok := listed["srv__good"]; !ok {
		t.Error("the valid tool was not registered")
	}
	actx := policy.NewContext(ctx, policy.Unrestricted())
	if res, _ := g.call(actx, "srv__bad", map[string]any{}); res.IsError || up.calls != 1 {
		t.Errorf("run_tool path to the unlisted tool: %+v (calls %d)", res, up.calls)
	}
}

// callRecorder is an Upstreams that answers every call with "ok".
type callRecorder struct{ calls int }

func (c *callRecorder) Servers() []string { return []string{"srv"} }
func (c *callRecorder) CallTool(context.Context, string, string, map[string]any) (*mcp.CallToolResult, error) {
	c.calls++
	return mcp.NewToolResultText("ok"), nil
}
func (c *callRecorder) ListPrompts(context.Context, string) ([]mcp.Prompt, error) { return nil, nil }
func (c *callRecorder) GetPrompt(context.Context, string, string, map[string]string) (*mcp.GetPromptResult, error) {
	return nil, nil
}
func (c *callRecorder) ListResources(context.Context, string) ([]mcp.Resource, error) {
	return nil, nil
}
func (c *callRecorder) ListResourceTemplates(context.Context, string) ([]mcp.ResourceTemplate, error) {
	return nil, nil
}
func (c *callRecorder) ReadResource(context.Context, string, string) (*mcp.ReadResourceResult, error) {
	return nil, nil
}

// TestReloadRegistersOnlyChanges: a reload hands mcp-go only the tools that
// changed, so a reload that changed nothing tells no client that the list
// changed, and one that did updates, adds and removes exactly those tools.
func TestReloadRegistersOnlyChanges(t *testing.T) {
	ctx := context.Background()
	st := tempCatalog(t)
	put := func(descs map[string]string) {
		t.Helper()
		var tools []catalog.Tool
		for name, d := range descs {
			tools = append(tools, catalog.Tool{Server: "srv", Name: name, Description: d,
				InputSchema: json.RawMessage(`{"type":"object","properties":{"s":{"type":"string"}}}`)})
		}
		putTools(t, st, "srv", tools...)
	}
	r, err := retrieve.New(retrieve.Config{Tools: st})
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(Config{Catalog: st, Upstreams: &callRecorder{}, Retriever: r, Sessions: session.NewMemory(),
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	put(map[string]string{"a": "first", "b": "second"})
	if err := g.ReloadTools(ctx); err != nil {
		t.Fatal(err)
	}
	h := g.Handler(HTTPOptions{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(policy.NewContext(r.Context(), policy.Unrestricted())))
	}))
	defer srv.Close()
	tr, err := transport.NewStreamableHTTP(srv.URL, transport.WithContinuousListening(), transport.WithHTTPLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	c := client.NewClient(tr, client.WithProtocolVersion(mcp.LATEST_LEGACY_PROTOCOL_VERSION))
	const marker = "notifications/test/marker"
	events := make(chan string, 16)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) || n.Method == marker {
			events <- n.Method
		}
	})
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{}); err != nil {
		t.Fatal(err)
	}
	next := func(what string) string {
		t.Helper()
		select {
		case m := <-events:
			return m
		case <-time.After(20 * time.Second):
			t.Fatalf("no notification after %s", what)
			return ""
		}
	}
	// Broadcasts reach a session once mcp-go registered it; its GET stream
	// is let through only after that (see waitInitialized).
	sid := tr.GetSessionId()
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		g.streamMu.Lock()
		open := g.streams[sid]
		g.streamMu.Unlock()
		if open > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the client's GET stream did not open")
		}
	}
	put(map[string]string{"a": "first", "b": "second", "c": "third"})
	if err := g.ReloadTools(ctx); err != nil {
		t.Fatal(err)
	}
	if m := next("adding c"); m != string(mcp.MethodNotificationToolsListChanged) {
		t.Fatalf("after adding c: %s", m)
	}

	// Nothing changed: no list_changed may come before the marker, which
	// travels the same stream in order.
	if err := g.ReloadTools(ctx); err != nil {
		t.Fatal(err)
	}
	g.MCPServer().SendNotificationToAllClients(marker, nil)
	if m := next("a reload that changed nothing"); m != marker {
		t.Fatalf("a reload that changed nothing sent %s", m)
	}

	put(map[string]string{"b": "second, reworded", "c": "third", "d": "fourth"})
	if err := g.ReloadTools(ctx); err != nil {
		t.Fatal(err)
	}
	if m := next("changing b, removing a and adding d"); m != string(mcp.MethodNotificationToolsListChanged) {
		t.Fatalf("after the change: %s", m)
	}
	listed := g.MCPServer().ListTools()
	if _, ok := listed["srv__a"]; ok {
		t.Error("srv__a was removed from the catalog but is still registered")
	}
	for name, desc := range map[string]string{"srv__b": "second, reworded", "srv__c": "third", "srv__d": "fourth"} {
		if st, ok := listed[name]; !ok || st.Tool.Description != desc {
			t.Errorf("%s: registered %v, want description %q", name, st, desc)
		}
	}
	if _, ok := listed[ToolFind]; !ok {
		t.Error("the meta-tools were unregistered")
	}
}
