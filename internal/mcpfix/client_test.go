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
