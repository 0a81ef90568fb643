package bridge

import (
	"context"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// caller is one way to call a tool.
type caller func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error)

// benchCallers returns the ways to call the stdio server command/args:
// directly over stdio (pkg/upstream), and through the bridge with an
// mcp-go client of each protocol era and with pkg/upstream over HTTP (as
// the gateway does).
func benchCallers(b *testing.B, command string, args ...string) map[string]caller {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	direct := upstream.NewManager(upstream.Options{Logger: quiet, IdleTimeout: -1})
	b.Cleanup(func() { direct.Close() })
	direct.SetServers(map[string]upstream.ServerConfig{"s": {Transport: upstream.TransportStdio, Command: command, Args: args}})

	tb := startBridge(b, Config{Command: command, Args: args, Logger: quiet})
	modern, legacy := connect(b, tb.url, false), connect(b, tb.url, true)
	gw := upstream.NewManager(upstream.Options{Logger: quiet})
	b.Cleanup(func() { gw.Close() })
	gw.SetServers(map[string]upstream.ServerConfig{"s": {Transport: upstream.TransportStreamableHTTP, URL: tb.url + "/mcp"}})

	return map[string]caller{
		"direct-stdio": func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
			return direct.CallTool(ctx, "s", name, args)
		},
		"bridge-modern-client": func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
			return testenv.CallToolCtx(ctx, modern, name, args)
		},
		"bridge-legacy-client": func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
			return testenv.CallToolCtx(ctx, legacy, name, args)
		},
		"bridge-via-upstream": func(ctx context.Context, name string, args map[string]any) (*mcp.CallToolResult, error) {
			return gw.CallTool(ctx, "s", name, args)
		},
	}
}

// benchCall measures one tool call through each caller, one at a time
// ("serial") and from 8 goroutines per CPU ("parallel").
func benchCall(b *testing.B, callers map[string]caller, tool string, args map[string]any, want string) {
	ctx := context.Background()
	for _, name := range []string{"direct-stdio", "bridge-modern-client", "bridge-legacy-client", "bridge-via-upstream"} {
		call := callers[name]
		// Warm up: start the processes and sessions outside the timing.
		for range 4 {
			if res, err := call(ctx, tool, args); err != nil || testenv.Text(res) != want {
				b.Fatalf("%s: %v %v", name, res, err)
			}
		}
		b.Run(name+"/serial", func(b *testing.B) {
			for b.Loop() {
				if _, err := call(ctx, tool, args); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			b.SetParallelism(8)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := call(ctx, tool, args); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// BenchmarkCallEcho calls servers/echo's echo tool (a Go server).
func BenchmarkCallEcho(b *testing.B) {
	benchCall(b, benchCallers(b, echoBin), "echo", map[string]any{"text": "hello"}, "hello")
}

// BenchmarkCallEverything calls server-everything's echo tool (Node).
func BenchmarkCallEverything(b *testing.B) {
	bin := testenv.NPMBin(b, "mcp-server-everything")
	benchCall(b, benchCallers(b, bin, "stdio"), "echo", map[string]any{"message": "hello"}, "Echo: hello")
}

// BenchmarkNew measures starting a bridge on servers/echo (process start,
// initialize and the four lists) and closing it.
func BenchmarkNew(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	for b.Loop() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		br, err := New(ctx, Config{Command: echoBin, Logger: quiet})
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		br.Close()
	}
}
