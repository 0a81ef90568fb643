package gateway

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// TestFidelityUnknownToolFields: members of an upstream tool that neither
// the catalog indexes nor mcp-go's Tool knows (a field of a later MCP
// revision, a vendor's own) survive the store and reach clients in
// tools/list, answered as JSON or as an event stream, and in
// describe_tool; known fields are not doubled. Unknown keys inside the
// members mcp-go decodes into its own types (annotations, execution,
// icons) survive too.
func TestFidelityUnknownToolFields(t *testing.T) {
	ctx := context.Background()
	st := tempCatalog(t)
	extra := `{"title":"Forecast","futureField":{"a":[1,2],"b":null},"x-vendor":"v1","_meta":{"k":1},` +
		`"execution":{"taskSupport":"forbidden","x-later":true},"icons":[{"src":"https://wx.example/i.png","x-dark":{"src":"d.png"}}]}`
	annotations := `{"readOnlyHint":true,"x-cost":"low"}`
	tl := catalog.Tool{Server: "wx", Name: "forecast", Description: "Weather forecast for a city.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}}}`), Extra: json.RawMessage(extra),
		Annotations: json.RawMessage(annotations)}
	plain := catalog.Tool{Server: "wx", Name: "plain", Description: "A tool with nothing unknown.",
		InputSchema: json.RawMessage(`{"type":"object"}`)}
	putTools(t, st, "wx", tl, plain)
	r, err := retrieve.New(retrieve.Config{Tools: st})
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.NewMemory()
	g, err := New(Config{Catalog: st, Upstreams: &callRecorder{}, Retriever: r, Sessions: sessions, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.ReloadTools(ctx); err != nil {
		t.Fatal(err)
	}
	h := g.Handler(HTTPOptions{SessionIDs: session.NewIDManager(sessions, time.Hour)})
	admin := policy.For(policy.Key{ID: "admin", Admin: true, Servers: map[string]policy.Rule{"wx": {}}})

	for _, accept := range []string{"application/json, text/event-stream", "text/event-stream, application/json"} {
		sid := ""
		post := func(body string) (string, string) {
			req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", accept)
			if sid != "" {
				req.Header.Set("Mcp-Session-Id", sid)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req.WithContext(policy.NewContext(req.Context(), admin)))
			if sid == "" {
				sid = rec.Header().Get("Mcp-Session-Id")
			}
			b, _ := io.ReadAll(rec.Body)
			return rec.Header().Get("Content-Type"), string(b)
		}
		post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		ctype, body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
		msg := body
		for _, line := range strings.Split(body, "\n") {
			if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"id":2`) {
				msg = d
			}
		}
		var res struct {
			Result struct {
				Tools []map[string]any `json:"tools"`
			} `json:"result"`
		}
		if err := json.Unmarshal([]byte(msg), &res); err != nil {
			t.Fatalf("tools/list (%s): %v %s", ctype, err, body)
		}
		var got, other map[string]any
		for _, tool := range res.Result.Tools {
			switch tool["name"] {
			case "wx__forecast":
				got = tool
			case "wx__plain":
				other = tool
			}
		}
		if got == nil || other == nil {
			t.Fatalf("tools/list (%s) lacks the tools: %s", ctype, body)
		}
		var want map[string]any
		_ = json.Unmarshal([]byte(extra), &want)
		want["annotations"] = map[string]any{"readOnlyHint": true, "x-cost": "low"}
		for _, k := range []string{"futureField", "x-vendor", "_meta", "title", "execution", "icons", "annotations"} {
			if !reflect.DeepEqual(got[k], want[k]) {
				t.Errorf("tools/list (%s): %s = %v, want %v", ctype, k, got[k], want[k])
			}
		}
		if _, ok := other["futureField"]; ok || !reflect.DeepEqual(other["annotations"], map[string]any{}) {
			t.Errorf("tools/list (%s) gave another tool's unknown field to wx__plain", ctype)
		}
	}

	req := mcp.CallToolRequest{}
	req.Params.Name = "describe_tool"
	req.Params.Arguments = map[string]any{"call_name": "wx__forecast"}
	res, err := g.handleDescribe(policy.NewContext(ctx, admin), req)
	if err != nil || res.IsError {
		t.Fatalf("describe_tool: %v %+v", err, res)
	}
	b, _ := json.Marshal(res.StructuredContent)
	if !strings.Contains(string(b), `"futureField":{"a":[1,2],"b":null}`) || !strings.Contains(string(b), `"x-vendor":"v1"`) {
		t.Errorf("describe_tool lacks the unknown fields: %s", b)
	}
}
