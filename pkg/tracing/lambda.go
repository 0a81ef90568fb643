package tracing

import (
	"context"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// coldDone is set once the first invocation of the process started.
var coldDone atomic.Bool

// coldStart is the process's setup, recorded by ColdStart and traced in
// the first invocation.
type coldStart struct {
	function   string
	start, end time.Time
}

var pendingCold atomic.Pointer[coldStart]

// ColdStart marks the start of a Lambda function's setup (the cold start
// before its first invocation); call the returned done when the setup
// ends. The cold start becomes a span named "cold start" in the first
// invocation's trace, a child of the invocation span dated to the setup
// (as X-Ray's Initialization subsegment), since the trace is known only
// then. A setup that fails is exported at once, as a root span with the
// error.
func ColdStart(function string) (done func(error)) {
	start := time.Now()
	return func(err error) {
		if !on.Load() {
			return
		}
		c := &coldStart{function: function, start: start, end: time.Now()}
		if err == nil {
			pendingCold.Store(c)
			return
		}
		ctx := context.Background()
		End(c.span(ctx), err)
		flushBy(ctx)
	}
}

// span starts the cold start's span under ctx's span, ending it at c.end
// unless ended with an error by the caller.
func (c *coldStart) span(ctx context.Context) trace.Span {
	_, span := tracer.Start(ctx, "cold start", trace.WithTimestamp(c.start), trace.WithAttributes(
		attribute.String("faas.name", c.function),
		attribute.Bool("faas.coldstart", true),
	))
	return endAt{span, c.end}
}

// endAt is a span that ends at a set time.
type endAt struct {
	trace.Span
	at time.Time
}

func (s endAt) End(...trace.SpanEndOption) { s.Span.End(trace.WithTimestamp(s.at)) }

// flushTimeout bounds the export at the end of an invocation that has no
// deadline of its own.
const flushTimeout = 2 * time.Second

// Invocation wraps a Lambda handler. Each invocation carries the Lambda
// request id (request_id on log lines); with tracing on it is a server
// span named for the function (AWS_LAMBDA_FUNCTION_NAME, else name) that
// continues the invocation's X-Ray trace (active tracing), with the faas
// attributes of the semantic conventions; the first invocation also
// carries the cold start (ColdStart). The spans are exported before the
// handler returns, within the invocation's deadline (the environment may
// freeze right after).
func Invocation[In, Out any](name, trigger string, h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return InvocationFrom(name, trigger, nil, h)
}

// InvocationFrom is Invocation for events that carry their caller's trace
// context, such as an HTTP request's headers: a valid traceparent in
// headers(event) is the invocation span's parent, before the Lambda's
// X-Ray trace. headers is only called with tracing on.
func InvocationFrom[In, Out any](name, trigger string, headers func(In) http.Header, h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (out Out, err error) {
		lc, hasLC := lambdacontext.FromContext(ctx)
		if hasLC && RequestID(ctx) == "" {
			ctx = WithRequestID(ctx, lc.AwsRequestID)
		}
		if !on.Load() {
			return h(ctx, in)
		}
		if headers != nil {
			ctx = callerParent(ctx, headers(in))
		}
		ctx = xrayParent(ctx)
		cold := !coldDone.Swap(true)
		attrs := []attribute.KeyValue{
			attribute.String("faas.trigger", trigger),
			attribute.Bool("faas.coldstart", cold),
		}
		spanName := name
		if fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME"); fn != "" {
			spanName = fn
			attrs = append(attrs, attribute.String("faas.name", fn))
		}
		if hasLC {
			attrs = append(attrs, attribute.String("faas.invocation_id", lc.AwsRequestID),
				attribute.String("cloud.resource_id", lc.InvokedFunctionArn))
		}
		ctx, span := tracer.Start(ctx, spanName, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
		if c := pendingCold.Swap(nil); cold && c != nil {
			c.span(ctx).End()
		}
		defer func() {
			End(span, err)
			flushBy(ctx)
		}()
		return h(ctx, in)
	}
}

// flushBy exports the queued spans before ctx's deadline (the
// invocation's), or within flushTimeout when it has none; a handler that
// was cancelled still gets its spans out.
func flushBy(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok {
		dl = time.Now().Add(flushTimeout)
	}
	fctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), dl)
	defer cancel()
	Flush(fctx)
}

// callerParent continues the W3C trace context in an event's headers when
// ctx has no span yet.
func callerParent(ctx context.Context, h http.Header) context.Context {
	if len(h) == 0 || trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	return propagation.TraceContext{}.Extract(ctx, propagation.HeaderCarrier(h))
}

// xrayParent continues the invocation's X-Ray trace (its
// X-Amzn-Trace-Id, which the Lambda runtime puts in the context and in
// _X_AMZN_TRACE_ID) when ctx has no span yet.
func xrayParent(ctx context.Context) context.Context {
	if trace.SpanContextFromContext(ctx).IsValid() {
		return ctx
	}
	h, _ := ctx.Value("x-amzn-trace-id").(string)
	if h == "" {
		h = os.Getenv("_X_AMZN_TRACE_ID")
	}
	if h == "" {
		return ctx
	}
	return xray.Propagator{}.Extract(ctx, propagation.MapCarrier{"X-Amzn-Trace-Id": h})
}
