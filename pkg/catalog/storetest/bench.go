package storetest

import (
	"context"
	"fmt"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// BenchmarkReplaceServerTools measures ReplaceServerTools on stores made by
// newStore (each empty; the benchmark closes it): 300 tools replaced by the
// same 300 (unchanged/300), and 300 or 20 tools all changed on every call
// (changed/300, changed/20; the first call adds them).
func BenchmarkReplaceServerTools(b *testing.B, newStore func(b *testing.B) catalog.Store) {
	ctx := context.Background()
	b.Run("unchanged/300", func(b *testing.B) {
		s := openBench(b, newStore)
		tools := Tools("big", "tool", 300, "a tool")
		if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "big"}, tools); err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "big"}, tools); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, n := range []int{300, 20} {
		b.Run(fmt.Sprintf("changed/%d", n), func(b *testing.B) {
			s := openBench(b, newStore)
			sets := [2][]catalog.Tool{Tools("big", "tool", n, "a tool"), Tools("big", "tool", n, "changed")}
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "big"}, sets[i%2]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkGetTool measures GetTool on a store made by newStore holding one
// server of 300 tools.
func BenchmarkGetTool(b *testing.B, newStore func(b *testing.B) catalog.Store) {
	ctx := context.Background()
	s := openBench(b, newStore)
	if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "big"}, Tools("big", "tool", 300, "a tool")); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := s.GetTool(ctx, fmt.Sprintf("big__tool%03d", i%300)); err != nil {
			b.Fatal(err)
		}
	}
}

func openBench(b *testing.B, newStore func(b *testing.B) catalog.Store) catalog.Store {
	b.Helper()
	return closeAtEnd(b, newStore(b))
}
