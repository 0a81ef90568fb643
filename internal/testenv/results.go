package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// The gateway's stored-result link: gateway.ResultURIPrefix and
// gateway.DownloadMeta (testenv imports no gateway package; pkg/local's
// TestLongCallsLargeResultLocal checks that they agree).
const (
	ResultURIPrefix = "gateway://_results/"
	DownloadMeta    = "io.toolrag/download"
)

// StoredResult returns the stored-result link of res and the preview text
// before it, failing the test when there is none.
func StoredResult(t testing.TB, res *mcp.CallToolResult) (link mcp.ResourceLink, preview string) {
	t.Helper()
	for _, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			preview = v.Text
		case mcp.ResourceLink:
			if strings.HasPrefix(v.URI, ResultURIPrefix) {
				return v, preview
			}
		}
	}
	raw, _ := json.Marshal(res)
	t.Fatalf("no stored-result link in %.500s", raw)
	return mcp.ResourceLink{}, ""
}

// ReadText reads resource uri, which must have one text content.
func ReadText(c *client.Client, uri string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(ctx, req)
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 {
		return "", fmt.Errorf("%d contents", len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		return "", fmt.Errorf("contents %T", res.Contents[0])
	}
	return tc.Text, nil
}

// DownloadResult GETs a stored-result link's signed URL (its _meta), with
// its signature replaced by sig when sig is set.
func DownloadResult(t testing.TB, link mcp.ResourceLink, sig string) ([]byte, int) {
	t.Helper()
	if link.Meta == nil {
		t.Fatal("the link has no _meta")
	}
	raw, _ := json.Marshal(link.Meta.AdditionalFields[DownloadMeta])
	var d struct {
		URL       string    `json:"url"`
		ExpiresAt time.Time `json:"expiresAt"`
	}
	if err := json.Unmarshal(raw, &d); err != nil || d.URL == "" || time.Until(d.ExpiresAt) <= 0 {
		t.Fatalf("download _meta %s: %v", raw, err)
	}
	u := d.URL
	if sig != "" {
		i := strings.LastIndex(u, "sig=")
		u = u[:i] + "sig=" + sig
	}
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return body, resp.StatusCode
}
