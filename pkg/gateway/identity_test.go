package gateway_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestInvalidIdentities: a prompt or tool name or a completion ref that
// cannot name anything exactly (control characters, invalid UTF-8, empty)
// is refused with invalid params before any lookup, on every surface.
func TestInvalidIdentities(t *testing.T) {
	e := newFuzzEntry(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION +
		`","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	send := func(method, params string) string {
		body := `{"jsonrpc":"2.0","id":4,"method":"` + method + `","params":{` + params + `,` + meta + `}}`
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer fz-agent-secret")
		req.Header.Set("MCP-Protocol-Version", mcp.LATEST_PROTOCOL_VERSION)
		setStandardHeaders(req, []byte(body))
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return rec.Body.String()
	}
	for _, tc := range []struct{ method, params, want string }{
		{"prompts/get", `"name":"alpha__greet\u0000ing"`, "the prompt name"},
		{"prompts/get", `"name":""`, "the prompt name is empty"},
		{"tools/call", `"name":"alpha__echo\nx","arguments":{}`, "the tool name"},
		{"completion/complete", `"ref":{"type":"ref/prompt","name":"a\u0007"},"argument":{"name":"x","value":"y"}`, "the prompt name"},
		{"completion/complete", `"ref":{"type":"ref/resource","uri":"gateway://alpha/up://items/..%2Fx"},"argument":{"name":"x","value":"y"}`, `encoded \"%2F\"`},
		{"resources/read", `"uri":"gateway://alpha/up://items/%zz"`, "malformed percent-encoding"},
	} {
		got := send(tc.method, tc.params)
		if !strings.Contains(got, `"code":-32602`) || !strings.Contains(got, "invalid params") || !strings.Contains(got, tc.want) || !strings.Contains(got, `"id":4`) {
			t.Errorf("%s %s: %s, want invalid params containing %q", tc.method, tc.params, got, tc.want)
		}
	}
	// A valid name goes through to the normal answer.
	if got := send("tools/call", `"name":"run_tool","arguments":{"call_name":"alpha__echo","arguments":{"text":"ok-1"}}`); !strings.Contains(got, "ok-1") {
		t.Errorf("valid call: %s", got)
	}
}
