package redact

import (
	"io"
	"log/slog"
	"testing"
)

// BenchmarkAuditLine is the cost redact.Handler adds to the gateway's
// commonest log line (one per tool call), against the bare handler.
func BenchmarkAuditLine(b *testing.B) {
	for _, bc := range []struct {
		name string
		h    slog.Handler
	}{
		{"plain", slog.NewJSONHandler(io.Discard, nil)},
		{"redacted", Handler(slog.NewJSONHandler(io.Discard, nil))},
	} {
		b.Run(bc.name, func(b *testing.B) {
			log := slog.New(bc.h)
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				log.Info("tool call", "key", "agent", "tool", "github__create_issue", "outcome", "ok", "duration_ms", 12.5)
			}
		})
	}
}

// BenchmarkTextError is Text on an upstream error with a URL.
func BenchmarkTextError(b *testing.B) {
	const msg = `upstream "web": tools/call failed: could not connect to https://user:pw@api.example.com/mcp?token=abc: connection refused`
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		_ = Text(msg)
	}
}
