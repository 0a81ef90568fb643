package metrics

import (
	"bytes"
	"context"
	"net/http"
	"time"
)

// ObserveTools records each meta-tool call's latency
// (mcp_tool_duration_seconds{tool=...}) and failures
// (mcp_tool_errors_total{tool=...}: a JSON-RPC error, a tool error or an
// HTTP error status), for the find_tools and run_tool metrics. It reads
// nothing of the request: the handler that decodes it (the gateway) names
// the tool of a tools/call with NoteTool.
func ObserveTools(reg *Registry, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		ow := &outcomeWriter{ResponseWriter: w, status: http.StatusOK}
		var out http.ResponseWriter = ow
		if _, ok := w.(http.Flusher); ok {
			out = flushOutcomeWriter{ow}
		}
		h.ServeHTTP(out, r.WithContext(context.WithValue(r.Context(), toolKey{}, &ow.tool)))
		if !ow.tool.noted {
			return
		}
		tool := metaToolLabel(ow.tool.name)
		reg.Histogram("mcp_tool_duration_seconds", "tool="+tool).Observe(time.Since(start))
		reg.Counter("mcp_tool_requests_total", "tool="+tool).Add(1)
		if ow.failed || ow.status >= 400 {
			reg.Counter("mcp_tool_errors_total", "tool="+tool).Add(1)
		}
	})
}

// toolKey is the context key of a request's *toolNote.
type toolKey struct{}

// toolNote is the tool a tools/call request calls, as NoteTool was told.
type toolNote struct {
	name  string
	noted bool
}

// NoteTool tells ObserveTools in front of the handler serving ctx's
// request that it is a tools/call of the tool name; without ObserveTools
// it does nothing.
func NoteTool(ctx context.Context, name string) {
	if n, ok := ctx.Value(toolKey{}).(*toolNote); ok {
		n.name, n.noted = name, true
	}
}

// metaToolLabel bounds the label set: the meta-tools by name, anything
// else (an admin's direct call of an upstream tool) as "direct".
func metaToolLabel(name string) string {
	switch name {
	case "find_tools", "run_tool", "run_tools", "describe_tool", "plan":
		return name
	}
	return "direct"
}

// outcomeWriter notes an error answer to a tools/call as it passes.
type outcomeWriter struct {
	http.ResponseWriter
	status int
	failed bool
	tool   toolNote
}

func (w *outcomeWriter) WriteHeader(code int) {
	w.status = code
	w.ResponseWriter.WriteHeader(code)
}

var (
	markToolError = []byte(`"isError":true`)
	markRPCError  = []byte(`"error":{`)
)

func (w *outcomeWriter) Write(p []byte) (int, error) {
	if w.tool.noted && !w.failed && (bytes.Contains(p, markToolError) || bytes.Contains(p, markRPCError)) {
		w.failed = true
	}
	return w.ResponseWriter.Write(p)
}

func (w *outcomeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type flushOutcomeWriter struct{ *outcomeWriter }

func (w flushOutcomeWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }
