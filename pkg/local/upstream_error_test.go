package local

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// An upstream's own JSON-RPC error reaches the client with its code and
// data: -32042 as that error to a client that declared URL elicitation
// (direct call and run_tool), as a tool error with the link to others,
// and every other error's code and data in the tool error's _meta and in
// the run_tools item.
func TestUpstreamIdentityUpstreamErrorIntact(t *testing.T) {
	up := testenv.StartErrorUpstream(t)
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n", up)
	keys := "keys:\n  - id: agent\n    secret: \"k-agent\"\n    servers: {up: {tool_prefixes: [\"*\"]}}\n"
	e := startGatewayWith(t, registry, keys, nil)

	urlClient := rawConnect(t, e.url, "k-agent", map[string]any{"elicitation": map[string]any{"url": map[string]any{}}})
	plain := rawConnect(t, e.url, "k-agent", map[string]any{})

	wantElicitation := func(t *testing.T, msg map[string]any) {
		t.Helper()
		e, _ := msg["error"].(map[string]any)
		if e == nil {
			t.Fatalf("want a JSON-RPC error, got %v", msg)
		}
		if e["code"] != float64(-32042) {
			t.Errorf("code = %v, want -32042", e["code"])
		}
		b, _ := json.Marshal(e["data"])
		for _, want := range []string{`"url":"https://upstream.example/connect?x=1"`, `"elicitationId":"el-1"`, `"mode":"url"`, `"message":"Authorize access to your files"`} {
			if !strings.Contains(string(b), want) {
				t.Errorf("data %s lacks %s", b, want)
			}
		}
	}
	t.Run("direct call, URL-elicitation client", func(t *testing.T) {
		wantElicitation(t, urlClient.CallTool("up__needs_link", nil))
	})
	t.Run("run_tool, URL-elicitation client", func(t *testing.T) {
		wantElicitation(t, urlClient.CallTool("run_tool", map[string]any{"call_name": "up__needs_link", "arguments": map[string]any{}}))
	})
	t.Run("other client gets the link in a tool error", func(t *testing.T) {
		msg := plain.CallTool("up__needs_link", nil)
		res, _ := msg["result"].(map[string]any)
		if res == nil || res["isError"] != true {
			t.Fatalf("want a tool error, got %v", msg)
		}
		b, _ := json.Marshal(res)
		if !strings.Contains(string(b), "https://upstream.example/connect?x=1") {
			t.Errorf("tool error lacks the link: %s", b)
		}
		meta, _ := res["_meta"].(map[string]any)
		ue, _ := meta["io.toolrag/upstream_error"].(map[string]any)
		if ue == nil || ue["code"] != float64(-32042) {
			t.Errorf("_meta lacks the upstream error: %s", b)
		}
	})
	t.Run("other code with data", func(t *testing.T) {
		for _, c := range []*testenv.RawSession{urlClient, plain} {
			msg := c.CallTool("up__quota", nil)
			res, _ := msg["result"].(map[string]any)
			if res == nil || res["isError"] != true {
				t.Fatalf("want a tool error, got %v", msg)
			}
			meta, _ := res["_meta"].(map[string]any)
			ue, _ := meta["io.toolrag/upstream_error"].(map[string]any)
			b, _ := json.Marshal(ue)
			if ue == nil || ue["code"] != float64(-32099) || ue["message"] != "quota exhausted" ||
				!strings.Contains(string(b), `"data":{"plan":"free","retry_after":7}`) {
				t.Errorf("upstream error in _meta = %s", b)
			}
		}
	})
	t.Run("run_tools items", func(t *testing.T) {
		msg := plain.CallTool("run_tools", map[string]any{"calls": []map[string]any{
			{"call_name": "up__quota", "arguments": map[string]any{}, "id": "q"},
			{"call_name": "up__needs_link", "arguments": map[string]any{}, "id": "l"},
		}})
		res, _ := msg["result"].(map[string]any)
		sc, _ := res["structuredContent"].(map[string]any)
		items, _ := sc["results"].([]any)
		if len(items) != 2 {
			t.Fatalf("results = %v", msg)
		}
		got := map[string]map[string]any{}
		for _, it := range items {
			m := it.(map[string]any)
			got[m["id"].(string)] = m
		}
		if q := got["q"]; q["error_code"] != float64(-32099) || fmt.Sprint(q["error_data"]) != "map[plan:free retry_after:7]" {
			t.Errorf("quota item = %v", q)
		}
		l := got["l"]
		b, _ := json.Marshal(l["error_data"])
		if l["error_code"] != float64(-32042) || !strings.Contains(string(b), "https://upstream.example/connect?x=1") {
			t.Errorf("needs_link item = %v", l)
		}
	})
}
