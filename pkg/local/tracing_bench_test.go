package local

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// BenchmarkTracingPerCall is BenchmarkPerCall's serve path (echo over
// stdio, log=async) with tracing off and on at 100 % sampling, exporting
// every span over OTLP/HTTP to a collector in this process that discards
// them (so the exporter's encoding is paid, not a backend's work):
//
//	go test ./pkg/local -run '^$' -bench TracingPerCall -benchtime 3000x -count 3
//
// cpu-µs/op is this process's CPU time per call, as in BenchmarkPerCall.
func BenchmarkTracingPerCall(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run("tracing="+mode, func(b *testing.B) {
			var exported atomic.Int64
			if mode == "on" {
				sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
					n, _ := io.Copy(io.Discard, r.Body)
					exported.Add(n)
					w.Header().Set("Content-Type", "application/x-protobuf")
				}))
				b.Cleanup(sink.Close)
				b.Setenv("OTEL_TRACES_EXPORTER", "otlp")
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
				shutdown, err := tracing.Setup(context.Background(), tracing.Config{Service: "bench"})
				if err != nil || !tracing.Enabled() {
					b.Fatalf("tracing did not turn on: %v", err)
				}
				b.Cleanup(func() { _ = shutdown(context.Background()) })
			}
			logOut = pipeLog(b, true)
			call := perCallTarget(b, "echo", "serve", mcp.LATEST_PROTOCOL_VERSION)
			ctx := context.Background()
			for range 20 {
				if err := call(ctx); err != nil {
					b.Fatal(err)
				}
			}
			cpu0 := processCPU()
			b.ResetTimer()
			for b.Loop() {
				if err := call(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(processCPU()-cpu0)/1e3/float64(b.N), "cpu-µs/op")
			if mode == "on" {
				tracing.Flush(context.Background())
				if exported.Load() == 0 {
					b.Fatal("no span reached the collector")
				}
			}
		})
	}
}
