package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// record turns tracing on for one test with an in-memory exporter.
func record(t *testing.T) *tracetest.InMemoryExporter {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	tracer = tp.Tracer(Scope)
	on.Store(true)
	t.Cleanup(func() {
		on.Store(false)
		_ = tp.Shutdown(context.Background())
	})
	return exp
}

func TestTracingOffByDefault(t *testing.T) {
	for _, env := range []map[string]string{
		{},
		{"OTEL_TRACES_EXPORTER": "none"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "true"},
	} {
		stop, err := Setup(context.Background(), Config{Getenv: func(k string) string { return env[k] }})
		if err != nil || Enabled() {
			t.Fatalf("env %v: err %v, enabled %v; want off without error", env, err, Enabled())
		}
		_ = stop(context.Background())
		ctx, span := Start(context.Background(), "x")
		if span.IsRecording() || trace.SpanContextFromContext(ctx).IsValid() {
			t.Fatalf("env %v: a span was recorded with tracing off", env)
		}
	}
}

func TestTracingBadSettings(t *testing.T) {
	for _, env := range []map[string]string{
		{"OTEL_TRACES_EXPORTER": "zipkin"},
		{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"},
	} {
		_, err := Setup(context.Background(), Config{Getenv: func(k string) string { return env[k] }})
		if err == nil || Enabled() {
			t.Fatalf("env %v: want an error and tracing off, got %v", env, err)
		}
		if !strings.Contains(err.Error(), "OTEL_") {
			t.Fatalf("error %q does not name the setting", err)
		}
	}
}

func TestTracingRequestID(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil)))
	h := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		log.InfoContext(r.Context(), "tool call", "key", "k1")
	}))
	for _, tc := range []struct{ given, want string }{
		{"abc-123", "abc-123"},
		{"bad id\nwith newline", ""}, // not a plain token: a new one
		{"", ""},
	} {
		buf.Reset()
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/mcp", nil)
		if tc.given != "" {
			req.Header.Set(RequestIDHeader, tc.given)
		}
		h.ServeHTTP(rec, req)
		got := rec.Header().Get(RequestIDHeader)
		if got == "" || (tc.want != "" && got != tc.want) || (tc.want == "" && got == tc.given) {
			t.Fatalf("given %q: response X-Request-Id %q", tc.given, got)
		}
		if !strings.Contains(buf.String(), "request_id="+got) {
			t.Fatalf("the log line lacks request_id=%s: %s", got, buf.String())
		}
	}
}

func TestTracingMetaParentAndPassThrough(t *testing.T) {
	exp := record(t)
	const parent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	ctx, span := StartRequest(context.Background(), Request{Method: "tools/call", Tool: "run_tool",
		ID: []byte(`7`), Session: "mcp-session-secret", Principal: "k1",
		Meta: []byte(`{"traceparent":"` + parent + `","progressToken":1}`)})
	ctx = WithClientMeta(ctx, &mcp.Meta{ProgressToken: 1, AdditionalFields: map[string]any{
		"traceparent": parent, "com.example/tenant": "t-9", "io.modelcontextprotocol/clientInfo": map[string]any{"name": "c"},
	}})
	var meta *mcp.Meta
	UpstreamMeta(ctx, &meta)
	span.End()
	if meta == nil || meta.AdditionalFields["com.example/tenant"] != "t-9" {
		t.Fatalf("the client's _meta did not pass through: %+v", meta)
	}
	if _, ok := meta.AdditionalFields["io.modelcontextprotocol/clientInfo"]; ok {
		t.Fatal("the client's own hop metadata was passed on")
	}
	tp, _ := meta.AdditionalFields["traceparent"].(string)
	if !strings.Contains(tp, "0af7651916cd43dd8448eb211c80319c") || tp == parent {
		t.Fatalf("upstream traceparent %q: want the same trace, the gateway's span", tp)
	}
	spans := exp.GetSpans()
	if len(spans) != 1 || spans[0].Name != "tools/call run_tool" || spans[0].Parent.SpanID().String() != "b7ad6b7169203331" {
		t.Fatalf("spans %+v", spans)
	}
	for _, a := range spans[0].Attributes {
		if strings.Contains(a.Value.Emit(), "mcp-session-secret") {
			t.Fatalf("attribute %s carries the session id", a.Key)
		}
	}
}

func TestTracingAroundAuth(t *testing.T) {
	exp := record(t)
	reject := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Authorization") == "" {
				w.WriteHeader(http.StatusUnauthorized)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	var inner trace.SpanContext
	h := Middleware(Around("authenticate", reject, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner = trace.SpanContextFromContext(r.Context())
	}), nil))
	req := httptest.NewRequest("POST", "/mcp", nil)
	req.Header.Set("Authorization", "Bearer x")
	h.ServeHTTP(httptest.NewRecorder(), req)
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/mcp", nil))
	spans := exp.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("got %d spans, want 4 (authenticate and POST /mcp twice)", len(spans))
	}
	// The handler after authentication runs in the HTTP span, not in the
	// ended authenticate span.
	if spans[1].Name != "POST /mcp" || inner.SpanID() != spans[1].SpanContext.SpanID() {
		t.Fatalf("the next handler's span is %v, want the HTTP span %v", inner.SpanID(), spans[1].SpanContext.SpanID())
	}
	if spans[2].Name != "authenticate" || spans[2].Status.Code.String() != "Error" {
		t.Fatalf("a rejected request's authenticate span: %+v", spans[2])
	}
}
