package loadtest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
)

// Upstream is an in-process Streamable HTTP MCP server on a loopback port
// whose tools answer with a short canned text echoing their arguments.
type Upstream struct {
	ID    string
	URL   string // http://127.0.0.1:<port>/mcp
	Tools []UpstreamTool
	srv   *http.Server
	done  chan struct{}
}

// CannedAnswer is the text a load-test tool answers: its name and its
// arguments as JSON (object keys sorted).
func CannedAnswer(tool string, args map[string]any) string {
	b, _ := json.Marshal(args)
	return tool + " ok " + string(b)
}

// StartUpstream serves tools on 127.0.0.1 (an ephemeral port).
func StartUpstream(id string, tools []UpstreamTool) (*Upstream, error) {
	s := server.NewMCPServer("load-"+id, "1.0.0", server.WithToolCapabilities(false), server.WithRecovery())
	st := make([]server.ServerTool, 0, len(tools))
	for _, t := range tools {
		name := t.Name
		st = append(st, server.ServerTool{
			Tool: mcp.Tool{Name: name, Description: t.Description, RawInputSchema: t.InputSchema},
			Handler: func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText(CannedAnswer(name, req.GetArguments())), nil
			},
		})
	}
	s.SetTools(st...)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("upstream %s: listen on 127.0.0.1: %w", id, err)
	}
	u := &Upstream{
		ID: id, URL: "http://" + ln.Addr().String() + "/mcp", Tools: tools,
		srv:  httpserve.New(server.NewStreamableHTTPServer(s)),
		done: make(chan struct{}),
	}
	go func() {
		defer close(u.done)
		_ = u.srv.Serve(httpserve.IdleUntilFirstByte(ln, u.srv.IdleTimeout)) // http.ErrServerClosed after Close
	}()
	return u, nil
}

// Close stops the server and waits for it.
func (u *Upstream) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := u.srv.Shutdown(ctx)
	if err != nil {
		err = errors.Join(err, u.srv.Close())
	}
	<-u.done
	return err
}
