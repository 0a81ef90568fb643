package metrics

import (
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// CloudWatch metrics: the Lambda functions write the counters of
// /tool-rag/metrics to stdout as Embedded Metric Format lines, which
// CloudWatch Logs turns into metrics in the namespace MetricsNamespace
// (TOOL_RAG_METRICS_NAMESPACE, default ToolRAG; "off" writes none), with
// the dimension FunctionName. A gateway writes at most one line set per
// MetricsInterval (TOOL_RAG_METRICS_INTERVAL seconds, default 60), after
// the request that finds the interval over: a Lambda process runs only
// while it serves, so there is no background flush.

// DefaultEMFNamespace is the CloudWatch namespace of the metrics.
const DefaultEMFNamespace = "ToolRAG"

// DefaultEMFInterval is the gateway's interval between EMF lines.
const DefaultEMFInterval = time.Minute

// Emitter writes a registry's EMF lines at most once per interval.
type Emitter struct {
	emf      *EMF
	reg      *Registry
	out      io.Writer
	interval time.Duration

	mu   sync.Mutex
	next time.Time
}

// NewEmitter returns nil when namespace is "off".
func NewEmitter(reg *Registry, namespace string, interval time.Duration, out io.Writer) *Emitter {
	if strings.EqualFold(namespace, "off") {
		return nil
	}
	if namespace == "" {
		namespace = DefaultEMFNamespace
	}
	if out == nil {
		out = os.Stdout
	}
	fn := os.Getenv("AWS_LAMBDA_FUNCTION_NAME")
	if fn == "" {
		fn = "local"
	}
	return &Emitter{emf: &EMF{Namespace: namespace, Dimensions: map[string]string{"FunctionName": fn}},
		reg: reg, out: out, interval: interval}
}

// Maybe writes the lines when the interval is over.
func (e *Emitter) Maybe(now time.Time) {
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

// Flush writes the lines now (the sync and health functions, once per
// run).
func (e *Emitter) Flush(now time.Time) {
	if e == nil {
		return
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	_ = e.emf.Write(e.out, e.reg, now)
}
