package metrics

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"
)

// ObserveTools records each meta-tool call's latency
// (mcp_tool_duration_seconds{tool=...}) and failures
// (mcp_tool_errors_total{tool=...}: a JSON-RPC error, a tool error or an
// HTTP error status), for the find_tools and run_tool metrics.
func ObserveTools(reg *Registry, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tool := ""
		if r.Method == http.MethodPost && r.Body != nil {
			// Only a body that fits observeMaxBody is parsed here; the
			// handler behind enforces the real limit.
			body, err := io.ReadAll(io.LimitReader(r.Body, observeMaxBody+1))
			r.Body = readCloser{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
			if err == nil && len(body) <= observeMaxBody {
				var m struct {
					Method string `json:"method"`
					Params struct {
						Name string `json:"name"`
					} `json:"params"`
				}
				if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" {
					tool = metaToolLabel(m.Params.Name)
				}
			}
		}
		if tool == "" {
			h.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		ow := &outcomeWriter{ResponseWriter: w, status: http.StatusOK}
		var out http.ResponseWriter = ow
		if _, ok := w.(http.Flusher); ok {
			out = flushOutcomeWriter{ow}
		}
		h.ServeHTTP(out, r)
		reg.Histogram("mcp_tool_duration_seconds", "tool="+tool).Observe(time.Since(start))
		reg.Counter("mcp_tool_requests_total", "tool="+tool).Add(1)
		if ow.failed || ow.status >= 400 {
			reg.Counter("mcp_tool_errors_total", "tool="+tool).Add(1)
		}
	})
}

// observeMaxBody is the largest request body ObserveTools parses.
const observeMaxBody = 1 << 20

// readCloser reads from r and closes c.
type readCloser struct {
	io.Reader
	c io.Closer
}

func (rc readCloser) Close() error { return rc.c.Close() }

// metaToolLabel bounds the label set: the meta-tools by name, anything
// else (an admin's direct call of an upstream tool) as "direct".
func metaToolLabel(name string) string {
	switch name {
	case "find_tools", "run_tool", "run_tools", "describe_tool", "plan":
		return name
	}
	return "direct"
}

// outcomeWriter notes an error answer as it passes.
type outcomeWriter struct {
	http.ResponseWriter
	status int
	failed bool
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
	if !w.failed && (bytes.Contains(p, markToolError) || bytes.Contains(p, markRPCError)) {
		w.failed = true
	}
	return w.ResponseWriter.Write(p)
}

func (w *outcomeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type flushOutcomeWriter struct{ *outcomeWriter }

func (w flushOutcomeWriter) Flush() { w.ResponseWriter.(http.Flusher).Flush() }
