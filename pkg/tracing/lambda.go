package tracing

import (
	"context"
	"os"
	"sync/atomic"

	"github.com/aws/aws-lambda-go/lambdacontext"
	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// coldDone is set once the first invocation of the process started.
var coldDone atomic.Bool

// StartColdStart starts the span of a Lambda function's cold start (the
// process's setup before its first invocation), named "cold start".
func StartColdStart(ctx context.Context, function string) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, noSpan
	}
	return tracer.Start(ctx, "cold start", trace.WithAttributes(
		attribute.String("faas.name", function),
		attribute.Bool("faas.coldstart", true),
	))
}

// Invocation wraps a Lambda handler. Each invocation carries the Lambda
// request id (request_id on log lines); with tracing on it is a server
// span named for the function (AWS_LAMBDA_FUNCTION_NAME, else name) that
// continues the invocation's X-Ray trace (active
// tracing), with the faas attributes of the semantic conventions, and the
// spans are exported before the handler returns (the environment may
// freeze right after).
func Invocation[In, Out any](name, trigger string, h func(context.Context, In) (Out, error)) func(context.Context, In) (Out, error) {
	return func(ctx context.Context, in In) (out Out, err error) {
		lc, hasLC := lambdacontext.FromContext(ctx)
		if hasLC && RequestID(ctx) == "" {
			ctx = WithRequestID(ctx, lc.AwsRequestID)
		}
		if !on.Load() {
			return h(ctx, in)
		}
		ctx = xrayParent(ctx)
		attrs := []attribute.KeyValue{
			attribute.String("faas.trigger", trigger),
			attribute.Bool("faas.coldstart", !coldDone.Swap(true)),
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
		defer func() {
			End(span, err)
			Flush(context.WithoutCancel(ctx))
		}()
		return h(ctx, in)
	}
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
