package upstream

import (
	"context"
	"io"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	mcpserver "github.com/mark3labs/mcp-go/server"
)

// BenchmarkMCPGoEra is the reproduction for the upstream report in
// docs/mcp-go-stateless-cost.md: mcp-go's own stdio client and server,
// connected by pipes in one process (no gateway code), calling a tool that
// echoes its argument, on each protocol era. Its CPU profile holds both
// sides:
//
//	go test ./pkg/upstream -run '^$' -bench MCPGoEra -benchtime 3s -cpuprofile cpu.out
func BenchmarkMCPGoEra(b *testing.B) {
	for _, era := range []string{mcp.LATEST_PROTOCOL_VERSION, legacyEra} {
		b.Run("era="+era, func(b *testing.B) {
			c := inProcessPair(b, era)
			ctx := context.Background()
			req := mcp.CallToolRequest{}
			req.Params.Name = "echo"
			req.Params.Arguments = map[string]any{"text": "hi"}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.CallTool(ctx, req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// inProcessPair connects an mcp-go client to an mcp-go stdio server with
// one echo tool over pipes and initialises it on era.
func inProcessPair(b *testing.B, era string) *client.Client {
	s := mcpserver.NewMCPServer("echo", "1", mcpserver.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("echo", mcp.WithString("text", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = mcpserver.NewStdioServer(s).Listen(ctx, inR, outW)
	}()
	var opts []client.ClientOption
	if era != mcp.LATEST_PROTOCOL_VERSION {
		opts = append(opts, client.WithProtocolVersion(era))
	}
	c := client.NewClient(transport.NewIO(outR, inW, nil), opts...)
	b.Cleanup(func() {
		cancel()
		inW.Close()
		outW.Close()
		<-done
		c.Close()
	})
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	if _, err := c.Initialize(ctx, initializeRequest()); err != nil {
		b.Fatal(err)
	}
	if c.ProtocolVersion() != era {
		b.Fatalf("negotiated %s, want %s", c.ProtocolVersion(), era)
	}
	return c
}
