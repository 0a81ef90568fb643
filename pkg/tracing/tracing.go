// Package tracing provides the gateway's OpenTelemetry traces: setup from
// the standard OTEL_* environment variables, span helpers that cost one
// atomic load when tracing is off, W3C trace context in HTTP headers and in
// MCP request _meta, and a request id for every log line.
//
// Tracing is off unless OTEL_TRACES_EXPORTER=otlp. The span names and
// attributes are listed in docs/observability.md.
package tracing

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/contrib/propagators/aws/xray"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// Scope is the instrumentation scope of every span.
const Scope = "github.com/toolrag/mcp-gateway"

var (
	on     atomic.Bool
	tracer trace.Tracer                  = noop.NewTracerProvider().Tracer(Scope)
	prop   propagation.TextMapPropagator = propagation.TraceContext{}
)

// Enabled reports whether spans are recorded and exported.
func Enabled() bool { return on.Load() }

// Config is what Setup needs besides the environment.
type Config struct {
	// Service is the default service.name (OTEL_SERVICE_NAME overrides it).
	Service string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Setup configures tracing from the standard OpenTelemetry environment:
// OTEL_TRACES_EXPORTER (otlp turns tracing on; unset or none leaves it
// off), OTEL_EXPORTER_OTLP_ENDPOINT / OTEL_EXPORTER_OTLP_TRACES_ENDPOINT,
// OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf), OTEL_EXPORTER_OTLP_HEADERS,
// OTEL_SERVICE_NAME, OTEL_RESOURCE_ATTRIBUTES, OTEL_TRACES_SAMPLER(_ARG)
// and OTEL_SDK_DISABLED. On AWS Lambda it adds the X-Ray propagator and
// X-Ray trace ids. The returned shutdown flushes the spans still queued;
// it is never nil. With tracing off, nothing is started.
func Setup(ctx context.Context, c Config) (shutdown func(context.Context) error, err error) {
	getenv := c.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	none := func(context.Context) error { return nil }
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		return none, nil
	}
	switch exp := strings.ToLower(strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))); exp {
	case "", "none":
		return none, nil
	case "otlp":
	default:
		return none, fmt.Errorf("OTEL_TRACES_EXPORTER=%q is not supported: use otlp (or none); tracing stays off", exp)
	}
	proto := getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
	if proto == "" {
		proto = getenv("OTEL_EXPORTER_OTLP_PROTOCOL")
	}
	if proto != "" && proto != "http/protobuf" {
		return none, fmt.Errorf("OTEL_EXPORTER_OTLP_PROTOCOL=%q is not supported: the gateway exports OTLP over HTTP (http/protobuf, port 4318); tracing stays off", proto)
	}
	exporter, err := otlptracehttp.New(ctx)
	if err != nil {
		return none, fmt.Errorf("tracing: the OTLP exporter could not be set up: %w", err)
	}
	if c.Service != "" && getenv("OTEL_SERVICE_NAME") == "" && !strings.Contains(getenv("OTEL_RESOURCE_ATTRIBUTES"), "service.name=") {
		_ = os.Setenv("OTEL_SERVICE_NAME", c.Service) // resource.WithFromEnv reads it
		defer os.Unsetenv("OTEL_SERVICE_NAME")
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK())
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		return none, fmt.Errorf("tracing: OTEL_RESOURCE_ATTRIBUTES: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exporter), sdktrace.WithResource(res)}
	props := []propagation.TextMapPropagator{propagation.TraceContext{}}
	if OnLambda(getenv) {
		opts = append(opts, sdktrace.WithIDGenerator(xray.NewIDGenerator()))
		props = append(props, xray.Propagator{})
	}
	if u := strings.TrimSpace(getenv("TOOL_RAG_TRACE_URL")); strings.Contains(u, "{trace_id}") {
		traceURL.Store(u)
	}
	tp := sdktrace.NewTracerProvider(opts...)
	otel.SetTracerProvider(tp)
	prop = propagation.NewCompositeTextMapPropagator(props...)
	otel.SetTextMapPropagator(prop)
	tracer = tp.Tracer(Scope)
	on.Store(true)
	return func(ctx context.Context) error {
		on.Store(false)
		tracer = noop.NewTracerProvider().Tracer(Scope)
		if err := tp.ForceFlush(ctx); err != nil {
			return err
		}
		return tp.Shutdown(ctx)
	}, nil
}

// Flush exports the spans still queued (a Lambda function calls it before
// the invocation returns, as the environment may freeze afterwards).
func Flush(ctx context.Context) {
	if !on.Load() {
		return
	}
	if tp, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); ok {
		_ = tp.ForceFlush(ctx)
	}
}

// OnLambda reports whether the process runs as an AWS Lambda function.
func OnLambda(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	return getenv("AWS_LAMBDA_FUNCTION_NAME") != ""
}

var noSpan trace.Span = noop.Span{}

// Start starts an internal span. With tracing off it returns ctx and a
// no-op span. Set attributes under `if span.IsRecording()` so that an
// untraced call builds none.
func Start(ctx context.Context, name string) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, noSpan
	}
	return tracer.Start(ctx, name)
}

// StartKind starts a span of the given kind (server, client, ...).
func StartKind(ctx context.Context, name string, kind trace.SpanKind) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, noSpan
	}
	return tracer.Start(ctx, name, trace.WithSpanKind(kind))
}

// StartAt starts a span that began at t (a stage measured before the
// span could be started).
func StartAt(ctx context.Context, name string, t time.Time) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, noSpan
	}
	return tracer.Start(ctx, name, trace.WithTimestamp(t))
}

// End ends span, recording err (its type as error.type, its text as the
// status description) when not nil.
func End(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		Fail(span, fmt.Sprintf("%T", err), err.Error())
	}
	span.End()
}

// Fail marks span failed with error.type kind and a description.
func Fail(span trace.Span, kind, desc string) {
	if !span.IsRecording() {
		return
	}
	span.SetAttributes(attribute.String("error.type", kind))
	span.SetStatus(codes.Error, desc)
}

// SampledTraceID is the trace id of ctx's span when tracing is on and the
// span is sampled (exported), else "".
func SampledTraceID(ctx context.Context) string {
	if !on.Load() {
		return ""
	}
	sc := trace.SpanContextFromContext(ctx)
	if !sc.IsSampled() {
		return ""
	}
	return sc.TraceID().String()
}

// TraceURL is the link to a trace in the operator's trace viewer, from
// TOOL_RAG_TRACE_URL with {trace_id} in it (e.g.
// http://localhost:16686/trace/{trace_id} for Jaeger); "" when unset or
// when tracing is off.
func TraceURL() string {
	if !on.Load() {
		return ""
	}
	return traceURL.Load().(string)
}

var traceURL atomic.Value

func init() { traceURL.Store("") }

// Init is Setup for a command's main: a configuration error is logged and
// tracing stays off. The returned func flushes and stops the exporter
// (within 5 s); call it before the process exits.
func Init(ctx context.Context, service string) (stop func()) {
	shutdown, err := Setup(ctx, Config{Service: service})
	if err != nil {
		slog.Warn("tracing is off", "error", err)
	}
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			slog.Warn("tracing: could not export the last spans", "error", err)
		}
	}
}
