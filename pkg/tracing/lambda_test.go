package tracing

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"github.com/mark3labs/mcp-go/mcp"
)

func TestTracingInvocationContinuesXRay(t *testing.T) {
	exp := record(t)
	coldDone.Store(false)
	t.Setenv("AWS_LAMBDA_FUNCTION_NAME", "toolrag-sync")
	var seen []string
	h := Invocation("sync", "timer", func(ctx context.Context, in string) (string, error) {
		seen = append(seen, RequestID(ctx))
		_, span := Start(ctx, "sync")
		span.End()
		return in, nil
	})
	lc := &lambdacontext.LambdaContext{AwsRequestID: "c6af9ac6-7b61-11e6-9a41-93e8deadbeef"}
	ctx := lambdacontext.NewContext(context.Background(), lc)
	t.Setenv("_X_AMZN_TRACE_ID", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	for range 2 {
		if _, err := h(ctx, "x"); err != nil {
			t.Fatal(err)
		}
	}
	if len(seen) != 2 || seen[0] != lc.AwsRequestID {
		t.Fatalf("request ids seen by the handler: %q", seen)
	}
	spans := exp.GetSpans()
	if len(spans) != 4 {
		t.Fatalf("got %d spans, want 4", len(spans))
	}
	inv := spans[1]
	if inv.Name != "toolrag-sync" || inv.SpanKind.String() != "server" {
		t.Fatalf("invocation span %q kind %s", inv.Name, inv.SpanKind)
	}
	if got := inv.SpanContext.TraceID().String(); got != "5759e988bd862e3fe1be46a994272793" || inv.Parent.SpanID().String() != "53995c3f42cd8ad8" {
		t.Fatalf("invocation span in trace %s under %s: want the X-Ray trace", got, inv.Parent.SpanID())
	}
	if spans[0].Parent.SpanID() != inv.SpanContext.SpanID() {
		t.Fatal("the handler's span is not a child of the invocation span")
	}
	attrs := func(i int) string {
		var b strings.Builder
		for _, a := range spans[i].Attributes {
			b.WriteString(string(a.Key) + "=" + a.Value.Emit() + " ")
		}
		return b.String()
	}
	if a := attrs(1); !strings.Contains(a, "faas.coldstart=true") || !strings.Contains(a, "faas.invocation_id="+lc.AwsRequestID) || !strings.Contains(a, "faas.trigger=timer") {
		t.Fatalf("first invocation: %s", a)
	}
	if a := attrs(3); !strings.Contains(a, "faas.coldstart=false") {
		t.Fatalf("second invocation: %s", a)
	}
}

func TestTracingLambdaRequestIDsInLogs(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(LogHandler(slog.NewTextHandler(&buf, nil)))
	ctx := lambdacontext.NewContext(context.Background(), &lambdacontext.LambdaContext{AwsRequestID: "lambda-1"})
	log.ErrorContext(WithRequestID(ctx, "apigw-1"), "upstream failed")
	if s := buf.String(); !strings.Contains(s, "request_id=apigw-1") || !strings.Contains(s, "lambda_request_id=lambda-1") {
		t.Fatalf("log line: %s", s)
	}
}

// With tracing off the helpers on the call path allocate nothing.
func TestTracingOffAllocatesNothing(t *testing.T) {
	if Enabled() {
		t.Fatal("tracing is on")
	}
	ctx := context.Background()
	var meta *mcp.Meta
	req := Request{Method: "tools/call", Tool: "run_tool", Session: "s"}
	n := testing.AllocsPerRun(100, func() {
		c, span := Start(ctx, "x")
		c, span2 := StartRequest(c, req)
		c, span3 := StartKind(c, "y", 0)
		UpstreamMeta(c, &meta)
		Fail(span3, "a", "b")
		End(span3, nil)
		End(span2, nil)
		End(span, nil)
		_ = SampledTraceID(c)
	})
	if n != 0 || meta != nil {
		t.Fatalf("%v allocations per call with tracing off (meta %v)", n, meta)
	}
}

// The cold start is a span of the first invocation's trace, a child of
// the invocation span dated to the setup; later invocations carry none.
func TestTracingColdStartInFirstInvocation(t *testing.T) {
	exp := record(t)
	coldDone.Store(false)
	t.Cleanup(func() { pendingCold.Store(nil) })
	done := ColdStart("gateway")
	time.Sleep(time.Millisecond)
	done(nil)
	if n := len(exp.GetSpans()); n != 0 {
		t.Fatalf("%d spans exported before the first invocation", n)
	}
	h := Invocation("gateway", "http", func(ctx context.Context, in string) (string, error) { return in, nil })
	for range 2 {
		if _, err := h(context.Background(), "x"); err != nil {
			t.Fatal(err)
		}
	}
	spans := exp.GetSpans()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "cold start,gateway,gateway" {
		t.Fatalf("spans %v, want the cold start in the first invocation only", names)
	}
	cold, inv := spans[0], spans[1]
	if cold.SpanContext.TraceID() != inv.SpanContext.TraceID() || cold.Parent.SpanID() != inv.SpanContext.SpanID() {
		t.Fatal("the cold start is not a child of the first invocation span")
	}
	if !cold.EndTime.After(cold.StartTime) || cold.EndTime.After(inv.StartTime) {
		t.Fatalf("cold start %v–%v, invocation from %v: want the setup's own times", cold.StartTime, cold.EndTime, inv.StartTime)
	}
}

// An HTTP event's traceparent is the invocation's parent, and the HTTP
// request's span (Middleware) is a child of the invocation span.
func TestTracingInvocationContinuesCaller(t *testing.T) {
	exp := record(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	t.Setenv("_X_AMZN_TRACE_ID", "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1")
	srv := Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	h := InvocationFrom("gateway", "http", func(in http.Header) http.Header { return in },
		func(ctx context.Context, in http.Header) (int, error) {
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/mcp", nil)
			r.Header = in
			srv.ServeHTTP(httptest.NewRecorder(), r)
			return 0, nil
		})
	if _, err := h(context.Background(), http.Header{"Traceparent": {"00-" + traceID + "-00f067aa0ba902b7-01"}}); err != nil {
		t.Fatal(err)
	}
	spans := exp.GetSpans()
	if len(spans) != 2 || spans[0].Name != "POST /mcp" {
		t.Fatalf("got %d spans, want POST /mcp and the invocation", len(spans))
	}
	req, inv := spans[0], spans[1]
	if inv.SpanContext.TraceID().String() != traceID || inv.Parent.SpanID().String() != "00f067aa0ba902b7" {
		t.Fatalf("invocation in trace %s under %s: want the caller's", inv.SpanContext.TraceID(), inv.Parent.SpanID())
	}
	if req.Parent.SpanID() != inv.SpanContext.SpanID() {
		t.Fatal("the HTTP request span is not a child of the invocation span")
	}
}
