package local

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/bridge"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// BenchmarkPerCall compares what one tool call costs through `toolrag
// serve` (an admin key calling echo__echo: auth, policy, schema
// validation, the audit line, relay bookkeeping, the pool) and through
// `toolrag bridge`, both in this process in front of servers/echo over
// stdio, with stdio direct (pkg/upstream) as the baseline:
//
//	go test ./pkg/local -run '^$' -bench PerCall -benchtime 3000x -count 3
//
// cpu-µs/op is this process's CPU time per call (client, HTTP and the
// gateway or bridge; the upstream process is not counted). Both servers
// log at info level as text into a pipe (as stderr is under bench-peers),
// so the audit line is paid: written at once (log=sync, as before issue 16)
// or through the buffered writer toolrag uses (log=async, pkg/logwriter).
func BenchmarkPerCall(b *testing.B) {
	for _, up := range []string{"echo", "everything"} {
		for _, proto := range []string{mcp.LATEST_LEGACY_PROTOCOL_VERSION, mcp.LATEST_PROTOCOL_VERSION} {
			for _, path := range []string{"direct", "bridge", "serve/log=sync", "serve/log=async", "bridge/log=async"} {
				b.Run("upstream="+up+"/client="+proto+"/path="+path, func(b *testing.B) {
					path, logMode, _ := strings.Cut(path, "/log=")
					logOut = pipeLog(b, logMode == "async")
					measureCalls(b, perCallTarget(b, up, path, proto))
				})
			}
		}
	}
}

// measureCalls warms call up (20 calls), then times it in b.Loop and
// reports this process's CPU time per call as cpu-µs/op.
func measureCalls(b *testing.B, call func(context.Context) error) {
	ctx := context.Background()
	for range 20 {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	cpu0 := testenv.ProcessCPU()
	b.ResetTimer()
	for b.Loop() {
		if err := call(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
}

// perCallKeys is one admin key for the echo server of the benchmark.
const perCallKeys = "keys:\n  - id: admin\n    secret: \"k-admin\"\n    admin: true\n    servers:\n      echo: {}\n"

// logOut is where infoLogger writes (set per benchmark by pipeLog).
var logOut io.Writer = io.Discard

func infoLogger() *slog.Logger {
	return slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

// pipeLog returns the write end of a pipe drained by a goroutine, directly
// or through a config.LogWriter.
func pipeLog(b *testing.B, async bool) io.Writer {
	r, w, err := os.Pipe()
	if err != nil {
		b.Fatal(err)
	}
	go func() { _, _ = io.Copy(io.Discard, r) }()
	if !async {
		b.Cleanup(func() { w.Close() })
		return w
	}
	lw := config.NewLogWriter(config.LogWriterConfig{Out: w})
	b.Cleanup(func() { lw.Close(); w.Close() })
	return lw
}

// perCallTarget returns a function making one echo call along path.
func perCallTarget(b *testing.B, up, path, proto string) func(context.Context) error {
	echo, cmdArgs, args := echoServer(b), []string(nil), map[string]any{"text": "hello"}
	if up == "everything" {
		echo, cmdArgs, args = testenv.NPMBin(b, "mcp-server-everything"), []string{"stdio"}, map[string]any{"message": "hello"}
	}
	switch path {
	case "direct":
		m := upstream.NewManager(upstream.Options{Logger: infoLogger(), IdleTimeout: -1})
		b.Cleanup(func() { m.Close() })
		m.SetServers(map[string]upstream.ServerConfig{"echo": {Transport: upstream.TransportStdio, Command: echo, Args: cmdArgs}})
		return func(ctx context.Context) error {
			_, err := m.CallTool(ctx, "echo", "echo", args)
			return err
		}
	case "bridge":
		br, err := bridge.New(context.Background(), bridge.Config{Command: echo, Args: cmdArgs, Logger: infoLogger()})
		if err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(br.Handler())
		b.Cleanup(func() { ts.Close(); br.Close() })
		return clientCall(b, ts.URL+"/mcp", nil, proto, "echo", args)
	case "serve":
		registry := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", echo)
		if len(cmdArgs) > 0 {
			registry += fmt.Sprintf("    args: [%q]\n", strings.Join(cmdArgs, ""))
		}
		vals := testenv.LocalGatewayEnv(b, registry, perCallKeys, nil)
		ctx := context.Background()
		g, err := New(ctx, Options{Getenv: func(k string) string { return vals[k] }, Logger: infoLogger()})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { g.Close() })
		if _, err := g.Sync(ctx, indexer.ModeFull); err != nil {
			b.Fatal(err)
		}
		ts := httptest.NewServer(g.Handler)
		b.Cleanup(ts.Close)
		return clientCall(b, ts.URL+"/mcp", map[string]string{"Authorization": "Bearer k-admin"}, proto, "echo__echo", args)
	}
	b.Fatalf("unknown path %q", path)
	return nil
}

func clientCall(b *testing.B, url string, headers map[string]string, proto, tool string, args map[string]any) func(context.Context) error {
	c, err := client.NewStreamableHttpClient(url, transport.WithHTTPHeaders(headers))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = proto
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	if c.ProtocolVersion() != proto {
		b.Fatalf("negotiated %s, want %s", c.ProtocolVersion(), proto)
	}
	b.Cleanup(func() { c.Close() })
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = args
	return func(ctx context.Context) error {
		res, err := c.CallTool(ctx, req)
		if err == nil && res.IsError {
			err = fmt.Errorf("%s failed: %+v", tool, res.Content)
		}
		return err
	}
}
