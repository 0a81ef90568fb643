package gateway

// What the gateway tells pkg/tracing about a request and a tool call.

import (
	"context"
	"net/http"

	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// traceRequest describes an inbound request for its span; it is called
// only with tracing on.
func (g *Server) traceRequest(r *http.Request, head *requestHead) tracing.Request {
	if !tracing.Enabled() {
		return tracing.Request{}
	}
	tr := tracing.Request{Method: head.Method, ID: head.ID, Meta: head.Params.Meta,
		Session: r.Header.Get(server.HeaderKeySessionID), Protocol: r.Header.Get("Mcp-Protocol-Version")}
	if head.Params.Name != nil {
		tr.Tool = *head.Params.Name
	}
	if pol, ok := policy.FromContext(r.Context()); ok {
		tr.Principal = pol.KeyID
	}
	return tr
}

type callSpanKey struct{}

// startCall starts the span of one tool call ("execute_tool {name}", the
// GenAI convention); logCall ends it with the audit outcome.
func startCall(ctx context.Context, callName string) context.Context {
	if !tracing.Enabled() {
		return ctx
	}
	ctx, span := tracing.Start(ctx, "execute_tool "+callName)
	return context.WithValue(ctx, callSpanKey{}, span)
}

// callSpan describes a tool call on its span once the catalog resolved it.
func callSpan(ctx context.Context, id, srv, principal, decision string) {
	span, ok := ctx.Value(callSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	span.SetAttributes(
		attribute.String("gen_ai.operation.name", "execute_tool"),
		attribute.String("gen_ai.tool.name", id),
		attribute.String("toolrag.server", srv),
		attribute.String("toolrag.principal", principal),
		attribute.String("toolrag.policy.decision", decision),
	)
}

// endCall ends a tool call's span with its audit outcome.
func endCall(ctx context.Context, outcome string) {
	span, ok := ctx.Value(callSpanKey{}).(trace.Span)
	if !ok {
		return
	}
	span.SetAttributes(attribute.String("toolrag.outcome", outcome))
	switch outcome {
	case "ok":
	case "tool_error":
		tracing.Fail(span, "tool_error", "the tool reported an error")
	default:
		tracing.Fail(span, outcome, outcome)
	}
	span.End()
}
