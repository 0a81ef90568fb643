package config

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// BenchmarkAuditLine is the gateway's per-call audit line (slog text
// through redact.Handler, as toolrag logs) written into a pipe, as stderr
// is when a process manager reads it: straight to the pipe (out=direct,
// before issue 16) or through a Writer (out=logwriter).
//
//	go test ./pkg/logwriter -run '^$' -bench AuditLine -benchtime 200000x -count 3
//
// cpu-ns/op is the process's CPU time per line (the caller's, the
// flusher's and the pipe reader's), ns/op what the caller waits.
func BenchmarkAuditLine(b *testing.B) {
	for _, out := range []string{"direct", "logwriter"} {
		for _, mode := range []string{"serial", "parallel"} {
			b.Run("out="+out+"/"+mode, func(b *testing.B) {
				r, w, err := os.Pipe()
				if err != nil {
					b.Fatal(err)
				}
				drained := make(chan struct{})
				go func() { _, _ = io.Copy(io.Discard, r); close(drained) }()
				var dst io.Writer = w
				var lw *LogWriter
				if out == "logwriter" {
					lw = NewLogWriter(LogWriterConfig{Out: w})
					dst = lw
				}
				log := slog.New(redact.Handler(slog.NewTextHandler(dst, &slog.HandlerOptions{Level: slog.LevelInfo})))
				ctx := context.Background()
				line := func() {
					log.LogAttrs(ctx, slog.LevelInfo, "tool call",
						slog.String("key", "bench-admin"), slog.String("tool", "ev__echo"),
						slog.String("outcome", "ok"), slog.Float64("duration_ms", 0.734))
				}
				cpu0 := testenv.ProcessCPU()
				if mode == "serial" {
					for b.Loop() {
						line()
					}
				} else {
					b.SetParallelism(16)
					b.RunParallel(func(pb *testing.PB) {
						for pb.Next() {
							line()
						}
					})
				}
				if lw != nil {
					if err := lw.Close(); err != nil {
						b.Fatal(err)
					}
				}
				w.Close()
				<-drained
				b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
