package testenv

import (
	"context"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// CallTool calls a tool with a deadline; the error is a protocol error, a
// tool failure is res.IsError.
func CallTool(c *client.Client, timeout time.Duration, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	return c.CallTool(ctx, req)
}

// Text joins the text content of a tool result ("" for nil).
func Text(r *mcp.CallToolResult) string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// ToolNames returns the names of tools, in order.
func ToolNames(tools []mcp.Tool) []string {
	out := make([]string, 0, len(tools))
	for _, t := range tools {
		out = append(out, t.Name)
	}
	return out
}
