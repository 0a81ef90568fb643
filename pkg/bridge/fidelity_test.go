package bridge

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// rawLists is the fixture of testdata/rawserver: every list of the server,
// with members and keys no MCP library knows.
const rawLists = "testdata/rawserver/lists.json"

// TestFidelityBridgeListsAsSent: the bridge serves the child's tools,
// prompts, resources and resource templates as the child sent them, to
// clients of both protocol eras: unknown members (a later revision's, a
// vendor's), unknown keys inside annotations, execution and icons, and
// schema keywords, compared as JSON.
func TestFidelityBridgeListsAsSent(t *testing.T) {
	b, err := os.ReadFile(rawLists)
	if err != nil {
		t.Fatal(err)
	}
	var want struct {
		Tools             []any `json:"tools"`
		Prompts           []any `json:"prompts"`
		Resources         []any `json:"resources"`
		ResourceTemplates []any `json:"resourceTemplates"`
	}
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	wants := map[string][]any{"tools": want.Tools, "prompts": want.Prompts, "resources": want.Resources, "resourceTemplates": want.ResourceTemplates}
	tb := startBridge(t, Config{Command: rawBin, Args: []string{"-lists", rawLists}})
	for _, modern := range []bool{false, true} {
		for method, member := range listMembers {
			var got []any
			if err := json.Unmarshal(listRaw(t, tb.url+"/mcp", method, modern)[member], &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, wants[member]) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(wants[member])
				t.Errorf("%s (modern %v) through the bridge:\n got %s\nwant %s", method, modern, gb, wb)
			}
		}
	}

	// A change of an unknown member alone is a change of the list.
	sig := tb.counts().tools.sig
	edited := bytes.Replace(b, []byte(`"x-future": {"nested": [1, 2]}`), []byte(`"x-future": {"nested": [3]}`), 1)
	file := t.TempDir() + "/lists.json"
	if err := os.WriteFile(file, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	tb2 := startBridge(t, Config{Command: rawBin, Args: []string{"-lists", file}})
	if tb2.counts().tools.sig == sig {
		t.Error("the bridge's list signature ignores unknown members: a change of one would not be announced")
	}
}

// listMembers are the list methods and the members of their results.
var listMembers = map[string]string{"tools/list": "tools", "prompts/list": "prompts",
	"resources/list": "resources", "resources/templates/list": "resourceTemplates"}

// TestFidelityBridgeAnswersAsSent: a tools/call, prompts/get and
// resources/read result reaches clients of both protocol eras as the child
// sent it: unknown result members, unknown keys of content items and
// messages, and a content type mcp-go does not know; on 2026-07-28 the
// bridge adds only resultType, its serverInfo in _meta and caching hints.
func TestFidelityBridgeAnswersAsSent(t *testing.T) {
	b, err := os.ReadFile(rawLists)
	if err != nil {
		t.Fatal(err)
	}
	var fixture struct {
		Answers map[string]map[string]any `json:"answers"`
	}
	if err := json.Unmarshal(b, &fixture); err != nil {
		t.Fatal(err)
	}
	tb := startBridge(t, Config{Command: rawBin, Args: []string{"-lists", rawLists}})
	params := map[string]string{
		"tools/call":     `{"name":"forecast","arguments":{"city":"Oslo"}}`,
		"prompts/get":    `{"name":"brief","arguments":{"city":"Oslo"}}`,
		"resources/read": `{"uri":"wx://today"}`,
	}
	for _, modern := range []bool{false, true} {
		for method, p := range params {
			var got map[string]any
			if err := json.Unmarshal(rawRequest(t, tb.url+"/mcp", method, p, modern), &got); err != nil {
				t.Fatal(err)
			}
			if modern {
				if got["resultType"] != "complete" {
					t.Errorf("%s (modern): resultType %v, want complete", method, got["resultType"])
				}
				delete(got, "resultType")
				delete(got, "cacheScope") // mcp-go's caching hints of a 2026-07-28 result
				delete(got, "ttlMs")
				if meta, ok := got["_meta"].(map[string]any); ok {
					delete(meta, mcp.MetaKeyServerInfo)
					if len(meta) == 0 {
						delete(got, "_meta")
					}
				}
			}
			if want := fixture.Answers[method]; !reflect.DeepEqual(got, want) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want)
				t.Errorf("%s (modern %v) through the bridge:\n got %s\nwant %s", method, modern, gb, wb)
			}
		}
	}
}

// listRaw answers method at url as a client receives it over the wire:
// in a session (2025-11-25), or as one 2026-07-28 request.
func listRaw(t *testing.T, url, method string, modern bool) map[string]json.RawMessage {
	t.Helper()
	var res map[string]json.RawMessage
	if err := json.Unmarshal(rawRequest(t, url, method, `{}`, modern), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// rawRequest returns the result of method with params (a JSON object) at
// url as a client receives it over the wire: in a session (2025-11-25), or
// as one 2026-07-28 request.
func rawRequest(t *testing.T, url, method, params string, modern bool) json.RawMessage {
	t.Helper()
	sid := ""
	post := func(body string, header map[string]string) []byte {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
			sid = s
		}
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	var p map[string]any
	if err := json.Unmarshal([]byte(params), &p); err != nil {
		t.Fatal(err)
	}
	var body []byte
	if modern {
		p["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
			mcp.MetaKeyClientInfo: map[string]any{"name": "raw", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}}
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": method, "params": p})
		h := map[string]string{mcp.HeaderProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, mcp.HeaderMethod: method}
		for _, k := range []string{"name", "uri"} {
			if v, ok := p[k].(string); ok {
				h[mcp.HeaderName] = v
			}
		}
		body = post(string(req), h)
	} else {
		h := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
		post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 2, "method": method, "params": p})
		body = post(string(req), h)
	}
	msg := body
	for _, line := range bytes.Split(body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id":2`)) {
			msg = d
		}
	}
	var res struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(msg, &res); err != nil || res.Result == nil {
		t.Fatalf("%s (modern %v): %v %s", method, modern, err, body)
	}
	return res.Result
}
