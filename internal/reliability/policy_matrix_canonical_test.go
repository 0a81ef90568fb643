package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// everythingEntry is a registry entry for @modelcontextprotocol/server-everything
// (npm) over stdio as server id, or "" when it is not installed and
// TOOLRAG_REQUIRE_EXTERNAL is not set (the cells that need it are then
// counted as skipped).
func everythingEntry(t testing.TB, id string) string {
	bin := filepath.Join(testenv.ToolsDir(t), "npm", "node_modules", ".bin", "mcp-server-everything")
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("TOOLRAG_REQUIRE_EXTERNAL") == "1" {
			t.Fatalf("npm executable mcp-server-everything is missing: run scripts/deps.sh (make test does)")
		}
		return ""
	}
	return fmt.Sprintf("  %s:\n    transport: stdio\n    command: %q\n    args: [stdio]\n", id, bin)
}

// The escapes a caller granted only demo://resource/dynamic/ tried: each
// names server-everything's static instructions document through the
// dynamic prefix. The upstream (TypeScript SDK, WHATWG URL parsing)
// resolves every one of them to the document, so the gateway must compare
// and forward the canonical form.
var dotEscapes = []string{
	"gateway://ev/demo://resource/dynamic/../static/document/instructions.md",
	"gateway://ev/demo://resource/dynamic/%2e%2e/static/document/instructions.md",
	"gateway://ev/demo://resource/dynamic/%2E%2E/static/document/instructions.md",
	"gateway://ev/demo://resource/dynamic/.%2e/static/document/instructions.md",
	"gateway://ev/demo://resource/dynamic/text/../../static/document/instructions.md",
	"gateway://ev/demo://resource/dynamic/./../static/document/instructions.md",
}

// Spellings of the granted dynamic text resource 1.
var dynamicSpellings = []string{
	"gateway://ev/demo://resource/dynamic/text/1",
	"gateway://ev/DEMO://Resource/dynamic/text/%31",
	"gateway://ev/demo://resource/dynamic/blob/../text/1",
}

// notCanonical cannot be made canonical (an encoded "/" in the path):
// invalid params for every key.
const notCanonical = "gateway://ev/demo://resource/dynamic/..%2fstatic/document/instructions.md"

const missingEvURI = "gateway://nosuch/demo://resource/static/document/instructions.md"

func readText(c *client.Client, uri string) (string, bool) {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		return err.Error(), false
	}
	if len(res.Contents) == 0 {
		return "no contents", false
	}
	if tc, ok := res.Contents[0].(mcp.TextResourceContents); ok {
		return tc.Text, true
	}
	return fmt.Sprintf("contents %+v", res.Contents[0]), true
}

var canonicalSurfaces = []surface{
	{name: "resources/read canonical URIs (server-everything)", needsEv: true, check: func(t *testing.T, m *matrix, k keyCase) {
		c := m.clients[k.name]
		miss, _ := readText(c, missingEvURI)
		for _, uri := range dotEscapes {
			if got, ok := readText(c, uri); ok || !sameAnswer(got, uri, miss, missingEvURI) {
				t.Errorf("escape %s answers %q (ok=%v); a missing resource answers %q", uri, got, ok, miss)
			}
		}
		for _, uri := range dynamicSpellings {
			got, ok := readText(c, uri)
			if k.name == "ev dynamic" {
				if !ok || !strings.HasPrefix(got, "Resource 1:") {
					t.Errorf("granted %s: %q", uri, got)
				}
			} else if ok || !sameAnswer(got, uri, miss, missingEvURI) {
				t.Errorf("forbidden %s answers %q; a missing resource answers %q", uri, got, miss)
			}
		}
		if got, ok := readText(c, notCanonical); ok || !strings.Contains(got, "invalid params") || !strings.Contains(got, "%2f") {
			t.Errorf("%s: %q, want invalid params naming the encoded slash", notCanonical, got)
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("resources/read", `{"uri":"`+dotEscapes[0]+`"}`)
	}},

	{name: "resources/subscribe canonical URIs (server-everything)", needsEv: true, check: func(t *testing.T, m *matrix, k keyCase) {
		c := m.legacy[k.name]
		sub := func(uri string) string {
			req := mcp.SubscribeRequest{}
			req.Params.URI = uri
			if err := c.Subscribe(context.Background(), req); err != nil {
				return err.Error()
			}
			return "subscribed"
		}
		miss := sub(missingEvURI)
		if miss == "subscribed" {
			t.Fatalf("subscribed to a missing server's resource")
		}
		for _, uri := range dotEscapes {
			if got := sub(uri); !sameAnswer(got, uri, miss, missingEvURI) {
				t.Errorf("escape %s: %q; missing: %q", uri, got, miss)
			}
		}
		got := sub(dynamicSpellings[1])
		if k.name == "ev dynamic" {
			if got != "subscribed" {
				t.Errorf("granted %s: %q", dynamicSpellings[1], got)
			}
			unsub := mcp.UnsubscribeRequest{}
			unsub.Params.URI = dynamicSpellings[2] // another spelling of the same resource
			if err := c.Unsubscribe(context.Background(), unsub); err != nil {
				t.Errorf("unsubscribe %s: %v", unsub.Params.URI, err)
			}
		} else if !sameAnswer(got, dynamicSpellings[1], miss, missingEvURI) {
			t.Errorf("forbidden %s: %q; missing: %q", dynamicSpellings[1], got, miss)
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("resources/subscribe", `{"uri":"`+dotEscapes[0]+`"}`)
	}},

	{name: "completion/complete canonical refs (server-everything)", needsEv: true, check: func(t *testing.T, m *matrix, k keyCase) {
		c := m.clients[k.name]
		complete := func(uri string) (string, bool) {
			req := mcp.CompleteRequest{}
			req.Params.Ref = mcp.ResourceReference{Type: "ref/resource", URI: uri}
			req.Params.Argument = mcp.CompleteArgument{Name: "resourceId", Value: "1"}
			res, err := c.Complete(context.Background(), req)
			if err != nil {
				return err.Error(), false
			}
			return strings.Join(res.Completion.Values, ","), true
		}
		const missingTmpl = "gateway://nosuch/demo://resource/dynamic/text/{resourceId}"
		miss, _ := complete(missingTmpl)
		for _, uri := range []string{
			"gateway://ev/demo://resource/dynamic/../static/{resourceId}",
			"gateway://ev/demo://resource/dynamic/%2e%2e/static/document/{name}",
			"gateway://ev/demo://resource/dynamic/text/../../static/document/instructions.md",
			dotEscapes[1],
		} {
			if got, ok := complete(uri); ok || !sameAnswer(got, uri, miss, missingTmpl) {
				t.Errorf("escape ref %s answers %q (ok=%v); a missing one answers %q", uri, got, ok, miss)
			}
		}
		const granted = "gateway://ev/demo://resource/dynamic/text/{resourceId}"
		got, ok := complete(granted)
		if k.name == "ev dynamic" {
			if !ok || got != "1" {
				t.Errorf("granted ref %s: %q ok=%v, want the upstream's completion 1", granted, got, ok)
			}
		} else if ok || !sameAnswer(got, granted, miss, missingTmpl) {
			t.Errorf("forbidden ref %s: %q; missing: %q", granted, got, miss)
		}
	}, raw: func(m *matrix) (string, string, string) {
		return "POST", "/mcp", mcpBody("completion/complete", `{"ref":{"type":"ref/resource","uri":"`+dotEscapes[0]+`"},"argument":{"name":"x","value":"1"}}`)
	}},
}

func init() { surfaces = append(surfaces, canonicalSurfaces...) }
