package mcpfix

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// BenchmarkServerCall is the server's side of one echo tools/call, from the
// request's bytes to the response's, as servers/echo's mcp-go server
// handles it (WithRecovery):
//
//	go test ./internal/mcpfix -run '^$' -bench ServerCall -benchtime 20000x -count 3
//
// It reports the process's CPU time per call (cpu-ns/op) besides ns/op:
// on a shared machine the wall clock says more about the other jobs.
//
// era=2025-11-25 is mcp-go on the older protocol (the request has no _meta);
// era=2026-07-28/path=mcpgo is mcp-go's HandleMessage on the stateless
// protocol, path=fast this package.
func BenchmarkServerCall(b *testing.B) {
	legacy := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	// What pkg/upstream (and mcp-go's client) send on 2026-07-28.
	modern := []byte(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"_meta":{` +
		`"io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"sampling":{}},` +
		`"io.modelcontextprotocol/clientInfo":{"name":"toolrag-gateway","version":"0.1.0"},` +
		`"io.modelcontextprotocol/protocolVersion":"2026-07-28"},"name":"echo","arguments":{"text":"hi"}}}`)
	srv := testServer(b, true)
	fast, err := New(Config{Server: srv, Recover: true})
	if err != nil {
		b.Fatal(err)
	}
	ctx := fast.BaseContext(context.Background())
	mcpgo := func(msg []byte) func() []byte {
		return func() []byte {
			out, err := json.Marshal(srv.HandleMessage(ctx, msg))
			if err != nil {
				b.Fatal(err)
			}
			return out
		}
	}
	for _, bc := range []struct {
		name string
		run  func() []byte
	}{
		{"era=2025-11-25/path=mcpgo", mcpgo(legacy)},
		{"era=2026-07-28/path=mcpgo", mcpgo(modern)},
		{"era=2026-07-28/path=fast", func() []byte {
			c := fast.Prepare(ctx, modern, nil)
			if c == nil {
				b.Fatal("the fast path did not take the call")
			}
			return fast.Run(ctx, c)
		}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var res struct {
				Result mcp.CallToolResult `json:"result"`
			}
			if err := json.Unmarshal(bc.run(), &res); err != nil || len(res.Result.Content) != 1 {
				b.Fatalf("unexpected response (%v)", err)
			}
			b.ReportAllocs()
			cpu0 := testenv.ProcessCPU()
			for b.Loop() {
				bc.run()
			}
			// CPU time rather than wall clock: the machine is shared.
			b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
}
