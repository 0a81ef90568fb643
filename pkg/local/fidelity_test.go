package local

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// rawRecorder is an http.RoundTripper that keeps the JSON-RPC messages of
// every response body (JSON or an event stream), so a test can compare
// what went over the wire, not what mcp-go decoded.
type rawRecorder struct {
	mu   sync.Mutex
	msgs []json.RawMessage
}

func (r *rawRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		pr, pw := io.Pipe()
		body := resp.Body
		go func() {
			sc := bufio.NewScanner(body)
			sc.Buffer(make([]byte, 1<<20), 16<<20)
			for sc.Scan() {
				line := sc.Text()
				if d, ok := strings.CutPrefix(line, "data:"); ok {
					r.keep([]byte(strings.TrimSpace(d)))
				}
				if _, err := io.WriteString(pw, line+"\n"); err != nil {
					break
				}
			}
			body.Close()
			pw.CloseWithError(sc.Err())
		}()
		resp.Body = pr
		return resp, nil
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	r.keep(b)
	resp.Body = io.NopCloser(bytes.NewReader(b))
	return resp, nil
}

func (r *rawRecorder) keep(b []byte) {
	if len(bytes.TrimSpace(b)) == 0 {
		return
	}
	r.mu.Lock()
	r.msgs = append(r.msgs, append(json.RawMessage(nil), b...))
	r.mu.Unlock()
}

// tools returns the raw tools of the tools/list answers recorded, by name.
func (r *rawRecorder) tools(t *testing.T) map[string]map[string]any {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]map[string]any{}
	for _, m := range r.msgs {
		var msg struct {
			Result struct {
				Tools []map[string]any `json:"tools"`
			} `json:"result"`
		}
		if json.Unmarshal(m, &msg) != nil {
			continue
		}
		for _, tool := range msg.Result.Tools {
			out[tool["name"].(string)] = tool
		}
	}
	return out
}

// listRaw lists the tools of the MCP server at url through a real mcp-go
// client and returns them as they went over the wire.
func listRaw(t *testing.T, url, key string) map[string]map[string]any {
	t.Helper()
	rec := &rawRecorder{}
	c, _ := testenv.Connect(t, url, testenv.MCPClient{Key: key, Legacy: true, Name: "fidelity",
		Transport: []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(&http.Client{Transport: rec})}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := c.ListTools(ctx, mcp.ListToolsRequest{}); err != nil {
		t.Fatalf("tools/list at %s: %v", url, err)
	}
	return rec.tools(t)
}

// TestFidelityEverything runs the fidelity checks over one gateway in front
// of npm server-everything.
func TestFidelityEverything(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	httpURL := startEverythingHTTP(t)
	sseURL := startEverything(t, "sse") + "/sse"
	reg := fmt.Sprintf("  evstdio:\n    transport: stdio\n    command: %q\n    args: [stdio]\n  evhttp:\n    transport: streamable_http\n    url: %q\n  evsse:\n    transport: sse\n    url: %q\n", bin, httpURL, sseURL)
	e := startGateway(t, reg, nil)
	t.Run("ToolsList", func(t *testing.T) { fidelityToolsList(t, e, httpURL) })
	t.Run("ResourceLinks", func(t *testing.T) { fidelityResourceLinks(t, e) })
}

// fidelityToolsList: every field of every tool of npm server-everything
// (output schemas, _meta, annotations, titles) reaches a client through the
// gateway as the upstream sent it, under the gateway's name
// (server__tool), over stdio and Streamable HTTP upstreams; describe_tool
// gives the same tool object, and find_tools gives the outputSchema.
func fidelityToolsList(t *testing.T, e *env, httpURL string) {

	upstreamTools := listRaw(t, httpURL, "")
	if len(upstreamTools) < 5 {
		t.Fatalf("server-everything listed %d tools", len(upstreamTools))
	}
	withOutput := 0
	for _, u := range upstreamTools {
		if u["outputSchema"] != nil {
			withOutput++
		}
	}
	if withOutput == 0 {
		t.Fatal("server-everything lists no tool with an outputSchema: this test would prove nothing")
	}

	viaGateway := listRaw(t, e.url, "k-everything")
	c, _ := connect(t, e.url, "k-everything", true)
	for _, srv := range []string{"evstdio", "evhttp"} {
		for name, u := range upstreamTools {
			want := map[string]any{}
			for k, v := range u {
				want[k] = v
			}
			want["name"] = srv + "__" + name
			got, ok := viaGateway[srv+"__"+name]
			if !ok {
				t.Errorf("%s: tools/list through the gateway lacks %s", srv, want["name"])
				continue
			}
			testenv.SameTool(t, srv+": tools/list through the gateway", got, want)

			res, err := testenv.CallTool(c, 30*time.Second, "describe_tool", map[string]any{"call_name": srv + "__" + name})
			if err != nil || res.IsError {
				t.Fatalf("describe_tool %s__%s: %v %s", srv, name, err, testenv.Text(res))
			}
			var d struct {
				Tool         map[string]any `json:"tool"`
				OutputSchema any            `json:"output_schema"`
			}
			sb, _ := json.Marshal(res.StructuredContent)
			if err := json.Unmarshal(sb, &d); err != nil {
				t.Fatal(err)
			}
			testenv.SameJSON(t, srv+": describe_tool's tool", d.Tool, want)
			if !reflect.DeepEqual(d.OutputSchema, u["outputSchema"]) {
				t.Errorf("%s: describe_tool's output_schema = %v, want %v", srv, d.OutputSchema, u["outputSchema"])
			}
		}
	}

	// find_tools with include_schema carries the outputSchema.
	res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "structured content weather output schema", "top_k": 20})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %s", err, testenv.Text(res))
	}
	var found struct {
		Results []struct {
			CallName     string `json:"call_name"`
			OutputSchema any    `json:"output_schema"`
		} `json:"results"`
	}
	sb, _ := json.Marshal(res.StructuredContent)
	_ = json.Unmarshal(sb, &found)
	seen := 0
	for _, r := range found.Results {
		_, name, _ := strings.Cut(r.CallName, "__")
		u := upstreamTools[name]
		if u == nil {
			continue
		}
		if !reflect.DeepEqual(r.OutputSchema, u["outputSchema"]) {
			t.Errorf("find_tools %s: output_schema = %v, want %v", r.CallName, r.OutputSchema, u["outputSchema"])
		}
		if u["outputSchema"] != nil {
			seen++
		}
	}
	if seen == 0 {
		t.Errorf("find_tools found no tool with an output schema: %s", sb)
	}
}

// fidelityResourceLinks: the resource links a tool returns name the
// gateway's resources (gateway://server/uri), which a key granted that
// server reads through resources/read, and a key without the grant cannot.
func fidelityResourceLinks(t *testing.T, e *env) {
	ctx := context.Background()
	c, _ := connect(t, e.url, "k-everything", true)
	other, _ := connect(t, e.url, "k-evhttp-only", true)
	res, err := testenv.CallTool(c, 30*time.Second, "evstdio__get-resource-links", map[string]any{"count": 2})
	if err != nil || res.IsError {
		t.Fatalf("get-resource-links: %v %+v", err, res)
	}
	var links []string
	for _, ct := range res.Content {
		if l, ok := ct.(mcp.ResourceLink); ok {
			links = append(links, l.URI)
		}
	}
	if len(links) != 2 {
		t.Fatalf("get-resource-links through the gateway gave links %v, want 2: %+v", links, res.Content)
	}
	for _, uri := range links {
		if !strings.HasPrefix(uri, "gateway://evstdio/") {
			t.Errorf("resource link %q is not in the gateway's namespace", uri)
			continue
		}
		rr := mcp.ReadResourceRequest{}
		rr.Params.URI = uri
		got, err := c.ReadResource(ctx, rr)
		if err != nil || len(got.Contents) == 0 {
			t.Errorf("resources/read %s by a key granted evstdio: %v", uri, err)
		} else if u := contentsURI(got.Contents[0]); u != uri {
			t.Errorf("resources/read %s answered contents of %q", uri, u)
		}
		if _, err := other.ReadResource(ctx, rr); err == nil {
			t.Errorf("resources/read %s by a key not granted evstdio succeeded", uri)
		}
		// The same resource of a server the other key is granted reads.
		rr.Params.URI = "gateway://evhttp/" + strings.TrimPrefix(uri, "gateway://evstdio/")
		if got, err := other.ReadResource(ctx, rr); err != nil || len(got.Contents) == 0 {
			t.Errorf("resources/read %s by a key granted evhttp: %v", rr.Params.URI, err)
		}
	}
}

func contentsURI(c mcp.ResourceContents) string {
	switch v := c.(type) {
	case mcp.TextResourceContents:
		return v.URI
	case mcp.BlobResourceContents:
		return v.URI
	case *mcp.TextResourceContents:
		return v.URI
	case *mcp.BlobResourceContents:
		return v.URI
	}
	return ""
}
