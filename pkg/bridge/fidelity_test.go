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
	var want map[string][]any
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}
	tb := startBridge(t, Config{Command: rawBin, Args: []string{"-lists", rawLists}})
	for _, modern := range []bool{false, true} {
		for method, member := range listMembers {
			var got []any
			if err := json.Unmarshal(listRaw(t, tb.url+"/mcp", method, modern)[member], &got); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want[member]) {
				gb, _ := json.Marshal(got)
				wb, _ := json.Marshal(want[member])
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

// listRaw answers method at url as a client receives it over the wire:
// in a session (2025-11-25), or as one 2026-07-28 request.
func listRaw(t *testing.T, url, method string, modern bool) map[string]json.RawMessage {
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
	var body []byte
	if modern {
		meta, _ := json.Marshal(map[string]any{mcp.MetaKeyProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
			mcp.MetaKeyClientInfo: map[string]any{"name": "raw", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}})
		body = post(`{"jsonrpc":"2.0","id":2,"method":"`+method+`","params":{"_meta":`+string(meta)+`}}`,
			map[string]string{mcp.HeaderProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, mcp.HeaderMethod: method})
	} else {
		h := map[string]string{mcp.HeaderProtocolVersion: "2025-11-25"}
		post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, nil)
		post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, h)
		body = post(`{"jsonrpc":"2.0","id":2,"method":"`+method+`"}`, h)
	}
	msg := body
	for _, line := range bytes.Split(body, []byte("\n")) {
		if d, ok := bytes.CutPrefix(line, []byte("data: ")); ok && bytes.Contains(d, []byte(`"id":2`)) {
			msg = d
		}
	}
	var res struct {
		Result map[string]json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(msg, &res); err != nil || res.Result == nil {
		t.Fatalf("%s (modern %v): %v %s", method, modern, err, body)
	}
	return res.Result
}
