package tracing

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/otel/trace"
)

// BenchmarkTracingLambdaFlush is what the flush at the end of a Lambda
// invocation costs: an invocation of ten spans with tracing on, its spans
// exported over OTLP/HTTP to a collector on loopback before it returns
// (flush=each), against the same invocations left to the batcher
// (flush=batched, one export per 512 spans or 5 s):
//
//	go test ./pkg/tracing -run '^$' -bench LambdaFlush -benchtime 2000x -count 3
func BenchmarkTracingLambdaFlush(b *testing.B) {
	sink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	b.Cleanup(sink.Close)
	b.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	b.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", sink.URL)
	shutdown, err := Setup(context.Background(), Config{Service: "bench"})
	if err != nil || !Enabled() {
		b.Fatalf("tracing did not turn on: %v", err)
	}
	b.Cleanup(func() { _ = shutdown(context.Background()) })
	work := func(ctx context.Context, _ string) (string, error) {
		for range 9 {
			_, span := Start(ctx, "stage")
			span.End()
		}
		return "", nil
	}
	for _, mode := range []string{"each", "batched"} {
		b.Run("flush="+mode, func(b *testing.B) {
			h := Invocation("bench", "http", work)
			if mode == "batched" {
				h = func(ctx context.Context, in string) (string, error) {
					ctx, span := StartKind(ctx, "bench", trace.SpanKindServer)
					defer span.End()
					return work(ctx, in)
				}
			}
			for b.Loop() {
				if _, err := h(context.Background(), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
