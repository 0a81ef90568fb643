package local

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// startEchoHTTP runs servers/echo as a Streamable HTTP server and returns
// its /mcp URL.
func startEchoHTTP(b testing.TB) string { return testenv.StartEcho(b) }

func benchClient(b *testing.B, url string, headers map[string]string) *client.Client {
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	return c
}

func benchCall(b *testing.B, c *client.Client, name string, args map[string]any) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := c.CallTool(ctx, req)
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %+v", name, err, res)
		}
	}
}

// BenchmarkDirectHTTPCall calls echo over Streamable HTTP without the
// gateway: the baseline for BenchmarkGatewayRunTool.
func BenchmarkDirectHTTPCall(b *testing.B) {
	c := benchClient(b, startEchoHTTP(b), nil)
	benchCall(b, c, "echo", map[string]any{"text": "hello"})
}

// BenchmarkGatewayRunTool calls the same upstream through the gateway's
// run_tool (auth, policy, schema validation, proxying).
func BenchmarkGatewayRunTool(b *testing.B) {
	url := startEchoHTTP(b)
	e := startGatewayB(b, fmt.Sprintf("  echohttp:\n    transport: streamable_http\n    url: %q\n", url))
	c := benchClient(b, e.url, map[string]string{"Authorization": "Bearer k-agent-http"})
	benchCall(b, c, "run_tool", map[string]any{"call_name": "echohttp__echo", "arguments": map[string]any{"text": "hello"}})
}

// BenchmarkGatewayFindTools measures find_tools through the whole stack.
func BenchmarkGatewayFindTools(b *testing.B) {
	e := startGatewayB(b, "")
	c := benchClient(b, e.url, map[string]string{"Authorization": "Bearer k-agent"})
	benchCall(b, c, "find_tools", map[string]any{"query": "reverse a string", "top_k": 5})
}

// startEverythingHTTP runs @modelcontextprotocol/server-everything in
// streamableHttp mode on a free loopback port and returns its /mcp URL.
func startEverythingHTTP(b testing.TB) string {
	b.Helper()
	return startEverything(b, "streamableHttp") + "/mcp"
}

// startEverything runs server-everything in the given mode (streamableHttp
// or sse) on a free loopback port and returns its base URL.
func startEverything(b testing.TB, mode string) string {
	b.Helper()
	bin := testenv.NPMBin(b, "mcp-server-everything")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, mode)
	cmd.Env = append(cmd.Environ(), fmt.Sprintf("PORT=%d", port))
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(60 * time.Second) // node starts slowly on a loaded 2-core machine
	for time.Now().Before(deadline) {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return "http://" + addr
		}
		time.Sleep(50 * time.Millisecond)
	}
	b.Fatal("server-everything did not start listening within 60 s")
	return ""
}

// BenchmarkDirectEverything calls server-everything's echo over Streamable
// HTTP without the gateway.
func BenchmarkDirectEverything(b *testing.B) {
	c := benchClient(b, startEverythingHTTP(b), nil)
	benchCall(b, c, "echo", map[string]any{"message": "hello"})
}

// BenchmarkGatewayEverything calls the same upstream through run_tool.
func BenchmarkGatewayEverything(b *testing.B) {
	url := startEverythingHTTP(b)
	e := startGatewayB(b, fmt.Sprintf("  echohttp:\n    transport: streamable_http\n    url: %q\n", url))
	c := benchClient(b, e.url, map[string]string{"Authorization": "Bearer k-agent-http"})
	benchCall(b, c, "run_tool", map[string]any{"call_name": "echohttp__echo", "arguments": map[string]any{"message": "hello"}})
}
