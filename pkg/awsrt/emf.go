package awsrt

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/metrics"
)

// CloudWatch metrics: the functions write the counters of
// /tool-rag/metrics to stdout as Embedded Metric Format lines, which
// CloudWatch Logs turns into metrics in the namespace MetricsNamespace
// (TOOL_RAG_METRICS_NAMESPACE, default ToolRAG; "off" writes none), with
// the dimension FunctionName. A gateway writes at most one line set per
// MetricsInterval (TOOL_RAG_METRICS_INTERVAL seconds, default 60), after
// the request that finds the interval over: a Lambda process runs only
// while it serves, so there is no background flush.

// DefaultMetricsNamespace is the CloudWatch namespace of the metrics.
const DefaultMetricsNamespace = "ToolRAG"

// DefaultMetricsInterval is the gateway's interval between EMF lines.
const DefaultMetricsInterval = time.Minute

// emitter writes a registry's EMF lines at most once per interval.
type emitter struct {
	emf      *metrics.EMF
	reg      *metrics.Registry
	out      io.Writer
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

// newEmitter returns nil when namespace is "off".
func newEmitter(reg *metrics.Registry, namespace string, interval time.Duration, out io.Writer) *emitter {
	if strings.EqualFold(namespace, "off") {
		return nil
	}
	if namespace == "" {
		namespace = DefaultMetricsNamespace
	}
	if out == nil {
		out = os.Stdout
	}
	fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	if fn == "" {
		fn = "local"
	}
	return &emitter{emf: &metrics.EMF{Namespace: namespace, Dimensions: map[string]string{"FunctionName": fn}},
		reg: reg, out: out, interval: interval}
}

// maybe writes the lines when the interval is over.
func (e *emitter) maybe(now time.Time) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if now.Before(e.next) {
		return
	}
	e.next = now.Add(e.interval)
	_ = e.emf.Write(e.out, e.reg, now)
}

// flush writes the lines now (the sync and health functions, once per
// run).
func (e *emitter) flush(now time.Time) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.emf.Write(e.out, e.reg, now)
}

// observeTools records each meta-tool call's latency
// (mcp_tool_duration_seconds{tool=...}) and failures
// (mcp_tool_errors_total{tool=...}: a JSON-RPC error, a tool error or an
// HTTP error status), for the find_tools and run_tool metrics.
func observeTools(reg *metrics.Registry, h http.Handler) http.Handler {
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

// observeMaxBody is the largest request body observeTools parses.
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

// emitSyncMetrics writes one EMF line set for a sync run:
// sync_runs_total, sync_failures_total (the run returned an error: the
// registry, the tools table or the index build), sync_successes_total
// (the index staleness alarm watches it: no success for hours means the
// published index no longer follows the upstreams), sync_stale_servers
// and sync_duration_seconds.
func emitSyncMetrics(cfg Config, rep SyncReport, err error) {
	reg := metrics.New()
	reg.Counter("sync_runs_total").Add(1)
	failures, successes := reg.Counter("sync_failures_total"), reg.Counter("sync_successes_total")
	if err != nil {
		failures.Add(1)
	} else {
		successes.Add(1)
	}
	stale := float64(len(rep.Sync.Stale))
	reg.Gauge("sync_stale_servers", func() float64 { return stale })
	took := rep.Duration.Seconds()
	reg.Gauge("sync_duration_seconds", func() float64 { return took })
	newEmitter(reg, cfg.MetricsNamespace, 0, cfg.metricsOut).flush(time.Now())
}

// emitHealthMetrics writes one EMF line set for a probe round:
// upstreams_up and upstreams_down.
func emitHealthMetrics(cfg Config, rep HealthReport) {
	reg := metrics.New()
	up, down := float64(len(rep.Up)), float64(len(rep.Down))
	reg.Gauge("upstreams_up", func() float64 { return up })
	reg.Gauge("upstreams_down", func() float64 { return down })
	newEmitter(reg, cfg.MetricsNamespace, 0, cfg.metricsOut).flush(time.Now())
}
