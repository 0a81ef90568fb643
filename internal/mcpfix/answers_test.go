package mcpfix

import (
	"encoding/json"
	"net/http/httptest"
	"testing"
)

// TestPatchResult: the response to the request, written as JSON or as the
// last event of a stream, gets the upstream's members (mcp-go's resultType
// and its _meta keys stay); notifications, another request's response and
// a response with nothing sent pass through byte for byte.
func TestPatchResult(t *testing.T) {
	sent := json.RawMessage(`{"content":[{"type":"x-new","x":1}],"resultType":"partial","_meta":{"up":1,"k":"up"},"x-future":2}`)
	const note = "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"result\":1}}\n\n"
	for _, c := range []struct {
		name   string
		id     string
		sent   json.RawMessage
		writes []string
		want   string
	}{
		{"json", `7`, sent,
			[]string{`{"jsonrpc":"2.0","id":7,"result":{"content":[],"resultType":"complete","_meta":{"k":"mcp-go"}}}` + "\n"},
			`{"id":7,"jsonrpc":"2.0","result":{"_meta":{"k":"mcp-go","up":1},"content":[{"type":"x-new","x":1}],"resultType":"complete","x-future":2}}` + "\n"},
		{"event stream", `"a"`, sent,
			[]string{note, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"a\",\"result\":{\"content\":[]}}\n\n"},
			note + "event: message\ndata: {\"id\":\"a\",\"jsonrpc\":\"2.0\",\"result\":{\"_meta\":{\"up\":1,\"k\":\"up\"},\"content\":[{\"type\":\"x-new\",\"x\":1}],\"x-future\":2}}\n\n"},
		{"another request", `8`, sent,
			[]string{`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
			`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
		{"nothing sent", `7`, nil,
			[]string{`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
			`{"jsonrpc":"2.0","id":7,"result":{"content":[]}}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			w := PatchResult(rec, json.RawMessage(c.id), func() json.RawMessage { return c.sent })
			for _, s := range c.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write: %d, %v; want %d", n, err, len(s))
				}
			}
			if got := rec.Body.String(); got != c.want {
				t.Errorf("wrote\n%q\nwant\n%q", got, c.want)
			}
		})
	}
}
