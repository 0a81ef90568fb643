package clients

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// snippet:mcp-go (shown verbatim in docs/clients.md)

// connect opens an MCP session with the gateway using an API key (or an
// OAuth access token: both go in the Authorization header).
func connect(ctx context.Context, url, key string) (*client.Client, error) {
	c, err := client.NewStreamableHttpClient(url,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + key}))
	if err != nil {
		return nil, err
	}
	if err := c.Start(ctx); err != nil {
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "my-agent", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// findAndRun is the two-step flow of a non-admin key: find_tools, then
// run_tool with the call_name it returned.
func findAndRun(ctx context.Context, c *client.Client, task string, args map[string]any) (*mcp.CallToolResult, error) {
	find := mcp.CallToolRequest{}
	find.Params.Name = "find_tools"
	find.Params.Arguments = map[string]any{"query": task, "top_k": 3}
	found, err := c.CallTool(ctx, find)
	if err != nil {
		return nil, err
	}
	var out struct {
		Results []struct {
			CallName string `json:"call_name"`
		} `json:"results"`
	}
	if len(found.Content) == 0 {
		return nil, fmt.Errorf("find_tools answered nothing")
	}
	text, _ := mcp.AsTextContent(found.Content[0])
	if text == nil || json.Unmarshal([]byte(text.Text), &out) != nil || len(out.Results) == 0 {
		return nil, fmt.Errorf("find_tools found nothing for %q", task)
	}
	run := mcp.CallToolRequest{}
	run.Params.Name = "run_tool"
	run.Params.Arguments = map[string]any{"call_name": out.Results[0].CallName, "arguments": args}
	return c.CallTool(ctx, run)
}

// end snippet:mcp-go

func listWithMCPGo(t *testing.T, url string, headers map[string]string) string {
	t.Helper()
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "t", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		t.Fatal(err)
	}
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	return strings.Join(names, " ")
}

// TestMCPGo runs the mcp-go snippet with an API key and with an OAuth
// access token from the authorization server.
func TestMCPGo(t *testing.T) {
	g := startGateway(t, true)
	mcpgoSnippetInDocs(t)
	token := g.as.Token(t, "agent-go", url.Values{"scope": {"mcp.tools"}, "resource": {g.url}})
	for name, bearer := range map[string]string{"API key": agentKey, "OAuth token": token} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			c, err := connect(ctx, g.url, bearer)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			res, err := findAndRun(ctx, c, "reverse a string", map[string]any{"text": "go"})
			if err != nil || res.IsError {
				t.Fatalf("%v %+v", err, res)
			}
			if txt, _ := mcp.AsTextContent(res.Content[0]); txt == nil || txt.Text != "og" {
				t.Errorf("answer %+v", res.Content[0])
			}
		})
	}
}

// mcpgoSnippetInDocs checks that docs/clients.md shows the code between
// the snippet markers of this file verbatim.
func mcpgoSnippetInDocs(t *testing.T) {
	t.Helper()
	root := testenv.Root(t)
	src, err := os.ReadFile(filepath.Join(root, "internal", "clients", "mcpgo_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, _ := strings.Cut(string(src), "// snippet:mcp-go (shown verbatim in docs/clients.md)\n")
	code, _, ok := strings.Cut(rest, "// end snippet:mcp-go")
	if !ok {
		t.Fatal("snippet markers missing")
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), strings.TrimSpace(code)) {
		t.Error("docs/clients.md does not show the mcp-go snippet verbatim")
	}
}
