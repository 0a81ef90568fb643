package gateway_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestForbiddenResourceLooksMissing: resources/read of a URI on a server the
// key is not granted is answered exactly like one on a server that does not
// exist (regression: the ungranted server's catch-all template answered
// "internal error: resource not found" while an unknown server got
// "handler not found", which revealed that the server exists).
func TestForbiddenResourceLooksMissing(t *testing.T) {
	e := newFuzzEntry(t)
	const meta = `"_meta":{"io.modelcontextprotocol/protocolVersion":"` + mcp.LATEST_PROTOCOL_VERSION +
		`","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`
	read := func(uri string) (int, string) {
		body := `{"jsonrpc":"2.0","id":3,"method":"resources/read","params":{"uri":"` + uri + `",` + meta + `}}`
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Authorization", "Bearer fz-agent-secret")
		req.Header.Set("MCP-Protocol-Version", mcp.LATEST_PROTOCOL_VERSION)
		setStandardHeaders(req, []byte(body))
		rec := httptest.NewRecorder()
		e.handler.ServeHTTP(rec, req)
		return rec.Code, strings.ReplaceAll(rec.Body.String(), uri, "<uri>")
	}
	if code, body := read("gateway://alpha/up://items/7"); code != 200 || !strings.Contains(body, `"text":"item"`) {
		t.Fatalf("granted read: %d %s", code, body)
	}
	missingCode, missing := read("gateway://nosuch/up://info")
	if !strings.Contains(missing, "resource not found") {
		t.Fatalf("missing server: %d %s", missingCode, missing)
	}
	for _, uri := range []string{"gateway://beta/up://info", "gateway://beta/up://items/7", "gateway://beta/up://anything", "gateway://beta/up://items/../info"} {
		if code, body := read(uri); code != missingCode || body != missing {
			t.Errorf("forbidden %s: %d %s\nmissing: %d %s", uri, code, body, missingCode, missing)
		}
	}
	// A URI that cannot be made canonical is invalid params, on a granted,
	// a forbidden and a missing server alike (the answer depends on its
	// syntax alone).
	var invalid []string
	for _, uri := range []string{"gateway://alpha/anything", "gateway://beta/anything", "gateway://nosuch/anything", "gateway://alpha/up://items/..%2Finfo"} {
		code, body := read(uri)
		if code != 200 || !strings.Contains(body, `"code":-32602`) {
			t.Errorf("%s: %d %s, want invalid params", uri, code, body)
		}
		invalid = append(invalid, body)
	}
	if invalid[0] != invalid[1] || invalid[1] != invalid[2] {
		t.Errorf("invalid URIs answered differently by grant: %q", invalid)
	}
}
