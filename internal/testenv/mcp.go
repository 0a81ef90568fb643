package testenv

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// MCPClient configures Dial and Connect: a real mcp-go client over
// Streamable HTTP.
type MCPClient struct {
	// Key is sent as "Authorization: Bearer <Key>" (empty: no header).
	Key string
	// Legacy negotiates the initialize-handshake era
	// (mcp.LATEST_LEGACY_PROTOCOL_VERSION) instead of the stateless one.
	Legacy bool
	// Name is the clientInfo name (default "test").
	Name string
	// Transport and Options are passed to the transport and the client.
	Transport []transport.StreamableHTTPCOption
	Options   []client.ClientOption
	// OnNotification, when set, receives the server's notifications.
	OnNotification func(mcp.JSONRPCNotification)
	// Capabilities are declared at initialize (e.g. extensions).
	Capabilities mcp.ClientCapabilities
}

// Dial opens an initialised MCP session with the server at url. The
// handshake has 30 s; the session lives until Close.
func Dial(url string, o MCPClient) (*client.Client, *mcp.InitializeResult, error) {
	topts := o.Transport
	if o.Key != "" {
		topts = append([]transport.StreamableHTTPCOption{transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + o.Key})}, topts...)
	}
	tr, err := transport.NewStreamableHTTP(url, topts...)
	if err != nil {
		return nil, nil, err
	}
	c := client.NewClient(tr, o.Options...)
	if o.OnNotification != nil {
		c.OnNotification(o.OnNotification)
	}
	// Start's context lives as long as the session (a continuous listener
	// runs under it); the handshake gets the deadline.
	if err := c.Start(context.Background()); err != nil {
		return nil, nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if o.Legacy {
		init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	}
	name := o.Name
	if name == "" {
		name = "test"
	}
	init.Params.ClientInfo = mcp.Implementation{Name: name, Version: "1"}
	init.Params.Capabilities = o.Capabilities
	res, err := c.Initialize(ctx, init)
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	return c, res, nil
}

// Connect is Dial for a test: a failure ends the test, and the session is
// closed when the test ends.
func Connect(t testing.TB, url string, o MCPClient) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	c, res, err := Dial(url, o)
	if err != nil {
		t.Fatalf("connect to %s (legacy=%v): %v", url, o.Legacy, err)
	}
	t.Cleanup(func() { c.Close() })
	return c, res
}

// CallTool calls a tool with a deadline; the error is a protocol error, a
// tool failure is res.IsError.
func CallTool(c *client.Client, timeout time.Duration, name string, args map[string]any) (*mcp.CallToolResult, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return CallToolCtx(ctx, c, name, args)
}

// CallToolCtx calls a tool under ctx.
func CallToolCtx(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// Text joins the text content of a tool result ("" for nil).
func Text(r *mcp.CallToolResult) string {
	return TextSep(r, "")
}

// ResultText reads a tools/call result as JSON (the "result" of the
// JSON-RPC answer): its text content joined, and whether it is a tool error.
func ResultText(t testing.TB, raw json.RawMessage) (text string, isError bool) {
	t.Helper()
	var r mcp.CallToolResult
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("tools/call result %.300q: %v", raw, err)
	}
	return Text(&r), r.IsError
}

// TextSep joins the text content of a tool result with sep between parts
// ("" for nil).
func TextSep(r *mcp.CallToolResult, sep string) string {
	if r == nil {
		return ""
	}
	var parts []string
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, sep)
}

// ToolNames returns the names of tools, in order.
func ToolNames(tools []mcp.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
