package testenv

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// SlowServer is an MCP server (Streamable HTTP) whose "slow" tool works for
// its argument ms milliseconds, a test-scaled long-running tool, answering
// "worked <ms>ms", unless its call is cancelled first.
type SlowServer struct {
	URL string // the MCP endpoint
	// Started receives the ms of each call as it starts; Ended how it ended:
	// nil when it worked to the end, the context's error when it was
	// cancelled (buffered; a test reads what it needs).
	Started chan float64
	Ended   chan error
}

// StartSlowServer serves a SlowServer on a loopback port until cleanup.
func StartSlowServer(t testing.TB) *SlowServer {
	t.Helper()
	s := &SlowServer{Started: make(chan float64, 64), Ended: make(chan error, 64)}
	up := server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(false))
	up.AddTool(mcp.NewTool("slow", mcp.WithDescription("Work for a long time (test-scaled)."), mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ms := req.GetFloat("ms", 0)
			s.Started <- ms
			select {
			case <-time.After(time.Duration(ms) * time.Millisecond):
				s.Ended <- nil
				return mcp.NewToolResultText(fmt.Sprintf("worked %vms", ms)), nil
			case <-ctx.Done():
				s.Ended <- ctx.Err()
				return nil, ctx.Err()
			}
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(up))
	t.Cleanup(func() { srv.CloseClientConnections(); srv.Close() })
	s.URL = srv.URL + "/mcp"
	return s
}

// WaitStarted waits for a call to start (up to d) and fails the test if
// none does.
func (s *SlowServer) WaitStarted(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-s.Started:
	case <-time.After(d):
		t.Fatalf("no call of the slow tool started within %v", d)
	}
}

// WaitEnded returns how the next call ended (up to d), failing the test
// if none ends.
func (s *SlowServer) WaitEnded(t testing.TB, d time.Duration) error {
	t.Helper()
	select {
	case err := <-s.Ended:
		return err
	case <-time.After(d):
		t.Fatalf("no call of the slow tool ended within %v", d)
		return nil
	}
}
