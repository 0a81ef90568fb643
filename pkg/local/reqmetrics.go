package local

import (
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/metrics"
)

// requestMetrics counts MCP requests and their durations by method. The
// series of each method are looked up once: building a series name (a
// Sprintf per label, a sort, a join) and taking the registry's lock on
// every request was a measurable part of a tool call's cost.
type requestMetrics struct {
	reg    *metrics.Registry
	series sync.Map // method → *methodSeries (methods are a bounded set)
}

type methodSeries struct {
	count *metrics.Counter
	dur   *metrics.Histogram
}

func newRequestMetrics(reg *metrics.Registry) *requestMetrics {
	return &requestMetrics{reg: reg}
}

func (m *requestMetrics) observe(method string, d time.Duration) {
	s, ok := m.series.Load(method)
	if !ok {
		s, _ = m.series.LoadOrStore(method, &methodSeries{
			count: m.reg.Counter("mcp_requests_total", "method="+method),
			dur:   m.reg.Histogram("mcp_request_duration_seconds", "method="+method),
		})
	}
	ms := s.(*methodSeries)
	ms.count.Add(1)
	ms.dur.Observe(d)
}
