package mcpfix

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// parseCallToolResult decodes what mcp.ParseCallToolResult decodes, and
// fails where it fails.
func TestParseCallToolResult(t *testing.T) {
	for _, raw := range []string{
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"echo","version":"1"}},"content":[{"type":"text","text":"hi"}],"resultType":"complete"}`,
		`{"content":[{"type":"text","text":"x"},{"type":"image","data":"AA==","mimeType":"image/png"}],"structuredContent":{"n":1},"isError":true}`,
		`{"content":[]}`,
		`{"resultType":"input_required","inputRequests":{},"requestState":"s"}`,
		`{"isError":true}`,
		`{"content":[{"type":"nope"}]}`,
		`[1]`,
	} {
		rm := json.RawMessage(raw)
		want, wantErr := mcp.ParseCallToolResult(&rm)
		got, err := parseCallToolResult(json.RawMessage(raw))
		if (err != nil) != (wantErr != nil) || !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v, %v\nwant %#v, %v", raw, got, err, want, wantErr)
		}
	}
}

// StatelessCaller.params encodes what mcp-go encodes for the same params,
// with the connection's _meta members added to the request's own (and
// the client capabilities replaced when the call declares its own).
func TestStatelessCallerParams(t *testing.T) {
	info := mcp.Implementation{Name: "gw", Version: "1"}
	connCaps := mcp.ClientCapabilities{Roots: &struct {
		ListChanged bool `json:"listChanged,omitempty"`
	}{ListChanged: true}}
	callCaps := &mcp.ClientCapabilities{Experimental: map[string]any{"x": map[string]any{}}}
	s := NewStatelessCaller(nil, mcp.LATEST_PROTOCOL_VERSION, info, connCaps)
	for _, tc := range []struct {
		name string
		p    mcp.CallToolParams
		caps *mcp.ClientCapabilities
	}{
		{name: "name only", p: mcp.CallToolParams{Name: "echo"}},
		{name: "arguments", p: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "a \"q\" ü"}}},
		{name: "empty meta", p: mcp.CallToolParams{Name: "echo", Meta: &mcp.Meta{}}},
		{name: "own meta", p: mcp.CallToolParams{Name: "echo", Meta: &mcp.Meta{ProgressToken: "p1", AdditionalFields: map[string]any{mcp.MetaKeyLogLevel: "debug"}}}},
		{name: "call caps", p: mcp.CallToolParams{Name: "echo", Meta: &mcp.Meta{ProgressToken: "p1"}}, caps: callCaps},
		{name: "request state", p: mcp.CallToolParams{Name: "echo", MultiRoundTripParams: mcp.MultiRoundTripParams{RequestState: "st"}}},
		{name: "input responses", p: mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"n": 1}, MultiRoundTripParams: mcp.MultiRoundTripParams{
			InputResponses: mcp.InputResponses{"r1": mcp.NewElicitationInputResponse(mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept}})},
			RequestState:   "st",
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			raw, err := s.params(tc.p, tc.caps)
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(raw, &got); err != nil {
				t.Fatalf("not JSON: %s: %v", raw, err)
			}
			want := decodeJSON(t, tc.p)
			meta, _ := want["_meta"].(map[string]any)
			if meta == nil {
				meta = map[string]any{}
			}
			caps := any(connCaps)
			if tc.caps != nil {
				caps = *tc.caps
			}
			meta[mcp.MetaKeyClientCapabilities] = decodeJSON(t, caps)
			meta[mcp.MetaKeyClientInfo] = decodeJSON(t, info)
			meta[mcp.MetaKeyProtocolVersion] = mcp.LATEST_PROTOCOL_VERSION
			want["_meta"] = meta
			if !reflect.DeepEqual(got, want) {
				t.Errorf("params\n got %s\nwant %v", raw, want)
			}
		})
	}
}

func decodeJSON(t *testing.T, v any) map[string]any {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
