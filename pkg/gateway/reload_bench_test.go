package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// BenchmarkReloadTools10k times ReloadTools over 10k tools (100 servers):
// the first load, a reload with nothing changed, and one with 1 % of the
// tools changed since the last.
//
//	go test -run '^$' -bench ReloadTools10k -benchtime 10x ./pkg/gateway/
func BenchmarkReloadTools10k(b *testing.B) {
	ctx := context.Background()
	st := tempCatalog(b)
	put := func(server int, version int) {
		tools := make([]catalog.Tool, 100)
		for i := range tools {
			tools[i] = catalog.Tool{Server: fmt.Sprintf("s%03d", server), Name: fmt.Sprintf("tool_%03d", i),
				Description: fmt.Sprintf("Tool %d of server %d, version %d: does one thing to a record.", i, server, version),
				InputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string","description":"record id"},"limit":{"type":"integer"},"filter":{"type":"object","properties":{"status":{"type":"string","enum":["open","closed"]}}}},"required":["id"]}`)}
		}
		putTools(b, st, fmt.Sprintf("s%03d", server), tools...)
	}
	for s := range 100 {
		put(s, 0)
	}
	newGateway := func() *Server {
		r, err := retrieve.New(retrieve.Config{Tools: st})
		if err != nil {
			b.Fatal(err)
		}
		g, err := New(Config{Catalog: st, Upstreams: &callRecorder{}, Retriever: r, Sessions: session.NewMemory(),
			Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		return g
	}
	b.Run("first", func(b *testing.B) {
		for b.Loop() {
			if err := newGateway().ReloadTools(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		g := newGateway()
		if err := g.ReloadTools(ctx); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if err := g.ReloadTools(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("1pct-changed", func(b *testing.B) {
		g := newGateway()
		if err := g.ReloadTools(ctx); err != nil {
			b.Fatal(err)
		}
		version := 0
		for b.Loop() {
			b.StopTimer()
			version++
			put(version%100, version) // one server of 100 changes all its tools
			b.StartTimer()
			if err := g.ReloadTools(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}
