package gateway_test

import (
	"context"
	"errors"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// TestCancellationReachesUpstream: a client that gives up on a call (its
// context ends, so mcp-go sends notifications/cancelled) stops the
// upstream's work too, through run_tool and a direct call, instead of
// leaving it running on a pooled connection.
func TestCancellationReachesUpstream(t *testing.T) {
	up := server.NewMCPServer("slow-upstream", "1.0.0", server.WithToolCapabilities(false))
	started, stopped := addBlockingTool(up)
	srv := httptest.NewServer(newTestGatewayWith(t, up, time.Minute, gateway.HTTPOptions{}, nil, nil))
	t.Cleanup(srv.Close)
	agent := connect(t, srv.URL+"/mcp", "fz-agent-secret")

	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"run_tool", "run_tool", map[string]any{"call_name": "alpha__block", "arguments": map[string]any{}}},
		{"direct", "alpha__block", map[string]any{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = tc.tool, tc.args
				_, err := agent.c.CallTool(ctx, req)
				done <- err
			}()
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not reach the upstream")
			}
			cancel()
			if err := <-done; err == nil {
				t.Error("the cancelled call returned a result")
			}
			select {
			case err := <-stopped:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("the upstream's work ended with %v, want context.Canceled", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the upstream kept working after the client cancelled")
			}
		})
	}
}

// addBlockingTool adds the tool "block" to up: a call reports on started
// when it begins, works until it is cancelled, and reports on stopped how
// its work ended (context.Canceled, or an error after a minute).
func addBlockingTool(up *server.MCPServer) (started chan struct{}, stopped chan error) {
	started, stopped = make(chan struct{}, 4), make(chan error, 4)
	up.AddTool(mcp.NewTool("block", mcp.WithDescription("Work until cancelled.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				stopped <- ctx.Err()
				return nil, ctx.Err()
			case <-time.After(time.Minute):
				stopped <- errors.New("not cancelled within a minute")
				return mcp.NewToolResultText("done"), nil
			}
		})
	return started, stopped
}
