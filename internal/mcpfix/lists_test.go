package mcpfix

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestPatchList: the items of a list answer, written as JSON or as an
// event stream, come back with patch's members; any other message is
// written byte for byte as mcp-go wrote it.
func TestPatchList(t *testing.T) {
	patch := func(it map[string]json.RawMessage) bool {
		if string(it["name"]) != `"a"` {
			return false
		}
		it["x-future"] = json.RawMessage(`{"nested":[1,2]}`)
		return true
	}
	for _, c := range []struct {
		name, ctype, in, want string
	}{
		{"json", "application/json",
			`{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"a"},{"name":"b"}]}}` + "\n",
			`{"id":2,"jsonrpc":"2.0","result":{"tools":[{"name":"a","x-future":{"nested":[1,2]}},{"name":"b"}]}}` + "\n"},
		{"event stream", "text/event-stream",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\nevent: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"a\"}]}}\n\n",
			"event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\nevent: message\ndata: {\"id\":2,\"jsonrpc\":\"2.0\",\"result\":{\"tools\":[{\"name\":\"a\",\"x-future\":{\"nested\":[1,2]}}]}}\n\n"},
		{"nothing to patch", "application/json",
			`{"jsonrpc":"2.0", "id":2,"result":{"tools":[{"name":"b"}]}}`,
			`{"jsonrpc":"2.0", "id":2,"result":{"tools":[{"name":"b"}]}}`},
		{"an error", "application/json",
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`,
			`{"jsonrpc":"2.0","id":2,"error":{"code":-32601,"message":"no"}}`},
		{"not JSON", "application/json", `oops`, `oops`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w, done := PatchList(rec, "tools", patch)
			w.Header().Set("Content-Type", c.ctype)
			w.Header().Set("Content-Length", "1")
			w.WriteHeader(201)
			_, _ = w.Write([]byte(c.in))
			done()
			if got := rec.Body.String(); got != c.want {
				t.Errorf("wrote\n%q\nwant\n%q", got, c.want)
			}
			if rec.Code != 201 || rec.Header().Get("Content-Length") != "" {
				t.Errorf("status %d, Content-Length %q: want 201 and none", rec.Code, rec.Header().Get("Content-Length"))
			}
		})
	}
	if ListMember("resources/templates/list") != "resourceTemplates" || ListMember("tools/call") != "" {
		t.Error("ListMember names the wrong members")
	}
}
