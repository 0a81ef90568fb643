package tracing

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/toolrag/mcp-gateway/internal/redact"
)

// Request describes one inbound MCP request for its server span. Never
// put arguments, results or credentials here.
type Request struct {
	Method    string          // JSON-RPC method
	ID        json.RawMessage // JSON-RPC id (absent for a notification)
	Tool      string          // params.name of tools/call or prompts/get
	Meta      json.RawMessage // params._meta, for its traceparent
	Session   string          // the session id; only its hash is recorded
	Principal string          // the principal id as audit lines show it
	Protocol  string          // the MCP protocol version, when known
}

// StartRequest starts the server span of one MCP request, named
// "{mcp.method.name} {target}" as the MCP semantic conventions say. A
// traceparent in params._meta (MCP 2026-07-28) is the span's parent, with
// a link to the HTTP request's span; otherwise the HTTP request's span is.
func StartRequest(ctx context.Context, r Request) (context.Context, trace.Span) {
	if !on.Load() {
		return ctx, noSpan
	}
	name := r.Method
	if name == "" {
		name = "mcp"
	}
	if r.Tool != "" {
		name += " " + r.Tool
	}
	opts := []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindServer)}
	if len(r.Meta) > 0 {
		var m struct {
			Traceparent string `json:"traceparent"`
			Tracestate  string `json:"tracestate"`
		}
		if json.Unmarshal(r.Meta, &m) == nil && m.Traceparent != "" {
			c := propagation.MapCarrier{"traceparent": m.Traceparent}
			if m.Tracestate != "" {
				c["tracestate"] = m.Tracestate
			}
			if pctx := (propagation.TraceContext{}).Extract(context.Background(), c); trace.SpanContextFromContext(pctx).IsValid() {
				if httpSpan := trace.SpanContextFromContext(ctx); httpSpan.IsValid() {
					opts = append(opts, trace.WithLinks(trace.Link{SpanContext: httpSpan}))
				}
				ctx = trace.ContextWithRemoteSpanContext(ctx, trace.SpanContextFromContext(pctx))
			}
		}
	}
	attrs := make([]attribute.KeyValue, 0, 8)
	attrs = append(attrs, attribute.String("mcp.method.name", r.Method))
	if len(r.ID) > 0 && string(r.ID) != "null" {
		attrs = append(attrs, attribute.String("jsonrpc.request.id", strings.Trim(string(r.ID), `"`)))
	}
	if r.Tool != "" {
		if r.Method == string(mcp.MethodToolsCall) {
			attrs = append(attrs, attribute.String("gen_ai.tool.name", r.Tool), attribute.String("gen_ai.operation.name", "execute_tool"))
		} else if r.Method == string(mcp.MethodPromptsGet) {
			attrs = append(attrs, attribute.String("gen_ai.prompt.name", r.Tool))
		}
	}
	if r.Session != "" {
		attrs = append(attrs, attribute.String("mcp.session.id", redact.SessionRef(r.Session)))
	}
	if r.Principal != "" {
		attrs = append(attrs, attribute.String("toolrag.principal", r.Principal))
	}
	if r.Protocol != "" {
		attrs = append(attrs, attribute.String("mcp.protocol.version", r.Protocol))
	}
	if id := RequestID(ctx); id != "" {
		attrs = append(attrs, attribute.String("toolrag.request_id", id))
	}
	opts = append(opts, trace.WithAttributes(attrs...))
	return tracer.Start(ctx, name, opts...)
}

type metaKey struct{}

// hopMeta are the _meta members that describe the client's own hop to the
// gateway (the gateway states its own upstream), or that the gateway sets
// itself: they are not passed through.
func hopMeta(k string) bool {
	switch k {
	case "traceparent", "tracestate", "baggage", "progressToken":
		return true
	}
	return strings.HasPrefix(k, "io.modelcontextprotocol/")
}

// WithClientMeta remembers the members of the client's request _meta that
// pass through to the upstream (everything but progressToken, the trace
// context and the io.modelcontextprotocol/ members of the client's hop).
func WithClientMeta(ctx context.Context, meta *mcp.Meta) context.Context {
	if meta == nil || len(meta.AdditionalFields) == 0 {
		return ctx
	}
	var pass map[string]any
	for k, v := range meta.AdditionalFields {
		if hopMeta(k) {
			continue
		}
		if pass == nil {
			pass = make(map[string]any, len(meta.AdditionalFields))
		}
		pass[k] = v
	}
	if pass == nil {
		return ctx
	}
	return context.WithValue(ctx, metaKey{}, pass)
}

// UpstreamMeta adds to an upstream request's _meta the client's
// pass-through members (WithClientMeta) and, with tracing on, the trace
// context of ctx (traceparent, tracestate): this is how a stdio upstream
// continues the trace. Members the gateway already set win.
func UpstreamMeta(ctx context.Context, meta **mcp.Meta) {
	pass, _ := ctx.Value(metaKey{}).(map[string]any)
	traced := on.Load() && trace.SpanContextFromContext(ctx).IsValid()
	if pass == nil && !traced {
		return
	}
	if *meta == nil {
		*meta = &mcp.Meta{}
	}
	m := *meta
	if m.AdditionalFields == nil {
		m.AdditionalFields = make(map[string]any, len(pass)+2)
	}
	for k, v := range pass {
		if _, set := m.AdditionalFields[k]; !set {
			m.AdditionalFields[k] = v
		}
	}
	if traced {
		c := propagation.MapCarrier{}
		propagation.TraceContext{}.Inject(ctx, c)
		for k, v := range c {
			m.AdditionalFields[k] = v
		}
	}
}

// ContextFromMeta continues the trace context of a request's _meta
// (traceparent, tracestate), for a process that receives MCP requests
// (toolrag bridge). ctx is returned unchanged when there is none.
func ContextFromMeta(ctx context.Context, meta map[string]any) context.Context {
	tp, _ := meta["traceparent"].(string)
	if tp == "" {
		return ctx
	}
	c := propagation.MapCarrier{"traceparent": tp}
	if ts, _ := meta["tracestate"].(string); ts != "" {
		c["tracestate"] = ts
	}
	return propagation.TraceContext{}.Extract(ctx, c)
}

// StartServe starts the server span of one MCP request a process serves
// from the mcp-go handler of method (toolrag bridge): the trace context of
// the request's _meta is its parent when there is one, else ctx's span
// (the HTTP request's). The client's other _meta members are kept for the
// upstream (WithClientMeta).
func StartServe(ctx context.Context, method, target string, meta *mcp.Meta) (context.Context, trace.Span) {
	ctx = WithClientMeta(ctx, meta)
	if !on.Load() {
		return ctx, noSpan
	}
	if meta != nil {
		ctx = ContextFromMeta(ctx, meta.AdditionalFields)
	}
	name := method
	if target != "" {
		name += " " + target
	}
	attrs := []attribute.KeyValue{attribute.String("mcp.method.name", method)}
	if target != "" && method == string(mcp.MethodToolsCall) {
		attrs = append(attrs, attribute.String("gen_ai.tool.name", target), attribute.String("gen_ai.operation.name", "execute_tool"))
	}
	if id := RequestID(ctx); id != "" {
		attrs = append(attrs, attribute.String("toolrag.request_id", id))
	}
	return tracer.Start(ctx, name, trace.WithSpanKind(trace.SpanKindServer), trace.WithAttributes(attrs...))
}
