package local

import (
	"context"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// BenchmarkTracingPerCall is BenchmarkPerCall's serve path (echo over
// stdio, log=async) with tracing off and on at 100 % sampling, exporting
// every span over OTLP/HTTP to Jaeger (testenv.StartJaeger): a process of
// its own, so that cpu-µs/op (this process's CPU time per call, as in
// BenchmarkPerCall) counts the gateway's tracing — spans, batching,
// protobuf encoding, the export requests — and not the collector's work.
// With -count N the two settings alternate, N rounds each:
//
//	go test ./pkg/local -run '^$' -bench TracingPerCall -benchtime 2000x -count 3
func BenchmarkTracingPerCall(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run("tracing="+mode, func(b *testing.B) {
			var j *testenv.Jaeger
			service := "bench-tracing"
			if mode == "on" {
				j = testenv.StartJaeger(b)
				b.Setenv("OTEL_TRACES_EXPORTER", "otlp")
				b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLP)
				shutdown, err := tracing.Setup(context.Background(), tracing.Config{Service: service})
				if err != nil || !tracing.Enabled() {
					b.Fatalf("tracing did not turn on: %v", err)
				}
				b.Cleanup(func() { _ = shutdown(context.Background()) })
			}
			logOut = pipeLog(b, true)
			measureCalls(b, perCallTarget(b, "echo", "serve", mcp.LATEST_PROTOCOL_VERSION))
			if mode == "on" {
				tracing.Flush(context.Background())
				spans := j.Service(b, service, 10*time.Second, func(s []testenv.JaegerSpan) bool { return len(s) > 0 })
				if _, ok := testenv.SpanNamed(spans, "tools/call echo"); !ok {
					b.Fatalf("no upstream call span reached Jaeger (%d spans)", len(spans))
				}
			}
		})
	}
}
