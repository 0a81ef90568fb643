package upstream

import (
	"context"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// Benchmarks: go test ./pkg/upstream -run '^$' -bench . -benchtime 3s
// Figures are recorded in docs/upstreams.md.

func echoRequest(text string) mcp.CallToolRequest {
	req := mcp.CallToolRequest{}
	req.Params.Name = "echo"
	req.Params.Arguments = map[string]any{"message": text}
	return req
}

// BenchmarkStdioPoolCall: server-everything's echo through the Manager's
// process pool (the process is started once, before the timer).
func BenchmarkStdioPoolCall(b *testing.B) {
	bin := testenv.NPMBin(b, "mcp-server-everything")
	m, _ := newTestManager(b, Options{})
	m.SetServers(map[string]ServerConfig{"ev": {Transport: TransportStdio, Command: bin, Args: []string{"stdio"}}})
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "warm"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hi"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioSpawnPerCall: what the reference design did for every call:
// spawn the server, initialize, call, and let it exit.
func BenchmarkStdioSpawnPerCall(b *testing.B) {
	bin := testenv.NPMBin(b, "mcp-server-everything")
	ctx := context.Background()
	for b.Loop() {
		c, err := client.NewStdioMCPClient(bin, nil, "stdio")
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.Initialize(ctx, initializeRequest()); err != nil {
			b.Fatal(err)
		}
		if _, err := c.CallTool(ctx, echoRequest("hi")); err != nil {
			b.Fatal(err)
		}
		if err := c.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioPoolCallGo: the same through the pool with the Go reference
// server (servers/echo), for the gateway's own overhead without Node.
func BenchmarkStdioPoolCallGo(b *testing.B) {
	m, _ := newTestManager(b, Options{})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	ctx := context.Background()
	if err := m.Ping(ctx, "echo"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": "hi"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkStdioPoolCallParallel: concurrent callers sharing the pool of 2.
func BenchmarkStdioPoolCallParallel(b *testing.B) {
	bin := testenv.NPMBin(b, "mcp-server-everything")
	m, _ := newTestManager(b, Options{})
	m.SetServers(map[string]ServerConfig{"ev": {Transport: TransportStdio, Command: bin, Args: []string{"stdio"}}})
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "warm"}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hi"}); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkHTTPCall: server-everything over Streamable HTTP with a plain
// mcp-go client (one session), the baseline for the gateway's own HTTP path.
func BenchmarkHTTPCall(b *testing.B) {
	e := startEverything(b, "streamableHttp")
	c, err := client.NewStreamableHttpClient(e.config().URL)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, initializeRequest()); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := c.CallTool(ctx, echoRequest("hi")); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHTTPCallManager: the same call through the Manager.
func BenchmarkHTTPCallManager(b *testing.B) {
	e := startEverything(b, "streamableHttp")
	m, _ := newTestManager(b, Options{})
	m.SetServers(map[string]ServerConfig{"ev": e.config()})
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "warm"}); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": "hi"}); err != nil {
			b.Fatal(err)
		}
	}
}
