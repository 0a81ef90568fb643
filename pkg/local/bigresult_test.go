package local

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

const bigKeys = `keys:
  - id: owner
    secret: "k-owner"
    servers: {big: {}}
  - id: other
    secret: "k-other"
    servers: {big: {}}
`

// TestLongCallsLargeResultLocal: a 50 MB result, over the default 8 MiB
// MCP_GATEWAY_MAX_RESULT_BYTES, comes back as a preview and a
// resource_link; resources/read and the link's signed URL give back every
// byte to the key that made the call, and another key gets "not found"
// (both eras; structured content over the limit likewise).
func TestLongCallsLargeResultLocal(t *testing.T) {
	reg := fmt.Sprintf("servers:\n  big:\n    transport: stdio\n    command: %q\n    args: [\"-big\"]\n", echoServer(t))
	e := startGatewayWith(t, reg, bigKeys, nil)
	if testenv.ResultURIPrefix != gateway.ResultURIPrefix || testenv.DownloadMeta != gateway.DownloadMeta {
		t.Fatalf("testenv's stored-result names %q %q are not the gateway's", testenv.ResultURIPrefix, testenv.DownloadMeta)
	}
	const size = 50_000_000
	want := sha256.Sum256([]byte(testenv.BigText(size)))
	for _, legacy := range bigEras {
		owner, _ := testenv.Connect(t, e.url, testenv.MCPClient{Key: "k-owner", Legacy: legacy})
		other, _ := testenv.Connect(t, e.url, testenv.MCPClient{Key: "k-other", Legacy: legacy})
		res, err := testenv.CallTool(owner, 2*time.Minute, "run_tool", map[string]any{"call_name": "big__big", "arguments": map[string]any{"bytes": size}})
		if err != nil || res.IsError {
			t.Fatalf("legacy=%v: call: %v %.300s", legacy, err, testenv.Text(res))
		}
		link, preview := testenv.StoredResult(t, res)
		if !strings.HasPrefix(preview, "00000000\n00000001\n") || len(preview) > 4096 {
			t.Errorf("legacy=%v: preview %.100q (%d bytes)", legacy, preview, len(preview))
		}
		if link.Size == nil || *link.Size != size {
			t.Errorf("legacy=%v: link size %v, want %d", legacy, link.Size, size)
		}
		got := readResult(t, owner, link.URI)
		if len(got) != size || sha256.Sum256([]byte(got)) != want {
			t.Fatalf("legacy=%v: resources/read gave %d bytes, not the %d of the result", legacy, len(got), size)
		}
		if _, err := testenv.ReadText(other, link.URI); err == nil || !strings.Contains(err.Error(), "not found") {
			t.Errorf("legacy=%v: another key read the result: %v", legacy, err)
		}
		body, status := testenv.DownloadResult(t, link, "")
		if status != http.StatusOK || len(body) != size || sha256.Sum256(body) != want {
			t.Fatalf("legacy=%v: signed URL: %d, %d bytes", legacy, status, len(body))
		}
	}

	// The signed URL is bound to its owner and signature.
	owner, _ := testenv.Connect(t, e.url, testenv.MCPClient{Key: "k-owner"})
	res, err := testenv.CallTool(owner, time.Minute, "run_tool", map[string]any{"call_name": "big__big", "arguments": map[string]any{"bytes": 9 << 20, "structured": true}})
	if err != nil || res.IsError {
		t.Fatalf("structured call: %v %.300s", err, testenv.Text(res))
	}
	if res.StructuredContent != nil {
		t.Error("structured content over the limit stayed inline")
	}
	link, _ := testenv.StoredResult(t, res)
	if link.MIMEType != "application/json" {
		t.Errorf("structured link MIME type %q", link.MIMEType)
	}
	var doc struct{ Data string }
	if err := json.Unmarshal([]byte(readResult(t, owner, link.URI)), &doc); err != nil || doc.Data != testenv.BigText(9<<20) {
		t.Fatalf("structured content read back: %v (%d bytes)", err, len(doc.Data))
	}
	if _, status := testenv.DownloadResult(t, link, "0"); status != http.StatusNotFound {
		t.Errorf("a tampered signature: HTTP %d, want 404", status)
	}
}

func readResult(t *testing.T, c *client.Client, uri string) string {
	t.Helper()
	text, err := testenv.ReadText(c, uri)
	if err != nil {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	return text
}

var bigEras = []bool{false, true}
