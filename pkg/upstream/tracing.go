package upstream

// What the manager tells pkg/tracing about an upstream call.

import (
	"context"
	"errors"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

type targetKey struct{}

// withTarget names the tool of a tools/call for its span.
func withTarget(ctx context.Context, name string) context.Context {
	if !tracing.Enabled() {
		return ctx
	}
	return context.WithValue(ctx, targetKey{}, name)
}

// startCall starts the client span of one upstream request, named
// "{mcp.method.name} {tool}" (the MCP conventions) or "{method} {server}".
func startCall(ctx context.Context, s *server, op string) (context.Context, trace.Span) {
	if !tracing.Enabled() {
		return ctx, trace.SpanFromContext(context.Background())
	}
	target, _ := ctx.Value(targetKey{}).(string)
	name := op + " " + s.id
	if target != "" {
		name = op + " " + target
	}
	ctx, span := tracing.StartKind(ctx, name, trace.SpanKindClient)
	transport := "tcp"
	if s.cfg.Transport == TransportStdio {
		transport = "pipe"
	}
	span.SetAttributes(
		attribute.String("mcp.method.name", op),
		attribute.String("toolrag.upstream.server", s.id),
		attribute.String("toolrag.upstream.transport", s.cfg.Transport),
		attribute.String("network.transport", transport),
	)
	if target != "" {
		span.SetAttributes(attribute.String("gen_ai.tool.name", target))
	}
	return ctx, span
}

// endCall ends an upstream span with the call's outcome.
func endCall(span trace.Span, err error) {
	if !span.IsRecording() {
		return
	}
	if err != nil {
		kind := "upstream_error"
		var p *problem
		if errors.As(err, &p) && p.kind != nil {
			kind = p.kind.Error()
		}
		span.SetAttributes(attribute.String("toolrag.outcome", "error"))
		tracing.Fail(span, kind, redact.Text(err.Error()))
	} else {
		span.SetAttributes(attribute.String("toolrag.outcome", "ok"))
	}
	span.End()
}

// startStage starts a span for a stage that is about to wait (pool wait,
// connect); with tracing off it costs nothing.
func startStage(ctx context.Context, name string) trace.Span {
	_, span := tracing.Start(ctx, name)
	return span
}

// startConnect starts a "connect" span when the process is not ready yet
// (starting and initializing).
func startConnect(ctx context.Context, ready <-chan struct{}) trace.Span {
	if !tracing.Enabled() {
		return trace.SpanFromContext(context.Background())
	}
	select {
	case <-ready:
		return trace.SpanFromContext(context.Background())
	default:
	}
	return startStage(ctx, "connect")
}
