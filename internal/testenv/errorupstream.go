package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// StartErrorUpstream starts a real mcp-go Streamable HTTP server whose
// tools fail with JSON-RPC errors of their own: needs_link with a -32042
// URL elicitation (as a 2025-11-25 server answers), quota with -32099 and
// data (answered by a handler in front of mcp-go, which has no way to send
// other codes with data). It returns the MCP endpoint's URL; the server
// stops with the test.
func StartErrorUpstream(t testing.TB) string {
	t.Helper()
	s := server.NewMCPServer("errors", "1")
	for _, name := range []string{"needs_link", "quota"} {
		s.AddTool(mcp.NewTool(name, mcp.WithDescription("fails with a JSON-RPC error: "+name)),
			func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("unreachable"), nil
			})
	}
	h := server.NewStreamableHTTPServer(s)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
			switch m.Params.Name {
			case "quota":
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32099,"message":"quota exhausted","data":{"retry_after":7,"plan":"free"}}}`, m.ID)
				return
			case "needs_link":
				// as a 2025-11-25 server answers (mcp-go reserves -32042
				// on the 2026-07-28 protocol the gateway negotiates)
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%s,"error":{"code":-32042,"message":"This request requires more information.","data":{"elicitations":[{"mode":"url","elicitationId":"el-1","url":"https://upstream.example/connect?x=1","message":"Authorize access to your files"}]}}}`, m.ID)
				return
			}
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}
