// Package metrics is a small registry of counters, gauges and latency
// histograms, rendered as JSON or in the Prometheus text format.
package metrics

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Registry holds named series. Names are Prometheus-style
// ("toolrag_requests_total"); labels are given as "key=value" pairs.
type Registry struct {
	mu       sync.Mutex
	counters map[string]*Counter
	hists    map[string]*Histogram
	gauges   map[string]func() float64
}

// New returns an empty registry.
func New() *Registry {
	return &Registry{counters: map[string]*Counter{}, hists: map[string]*Histogram{}, gauges: map[string]func() float64{}}
}

// Counter is a monotonically increasing count.
type Counter struct{ v atomic.Int64 }

// Add adds n.
func (c *Counter) Add(n int64) { c.v.Add(n) }

// Value returns the count.
func (c *Counter) Value() int64 { return c.v.Load() }

func seriesName(name string, labels []string) string {
	if len(labels) == 0 {
		return name
	}
	parts := make([]string, 0, len(labels))
	for _, l := range labels {
		k, v, _ := strings.Cut(l, "=")
		parts = append(parts, fmt.Sprintf("%s=%q", k, v))
	}
	sort.Strings(parts)
	return name + "{" + strings.Join(parts, ",") + "}"
}

// Counter returns (creating) the counter for name and labels.
func (r *Registry) Counter(name string, labels ...string) *Counter {
	return series(r, r.counters, name, labels)
}

// series returns (creating) the series of m for name and labels.
func series[T any](r *Registry, m map[string]*T, name string, labels []string) *T {
	key := seriesName(name, labels)
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := m[key]
	if !ok {
		v = new(T)
		m[key] = v
	}
	return v
}

// Gauge registers a function sampled at render time.
func (r *Registry) Gauge(name string, f func() float64, labels ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gauges[seriesName(name, labels)] = f
}

// CounterFunc registers an externally kept count (e.g. an atomic in
// another package), rendered as a counter.
func (r *Registry) CounterFunc(name string, f func() int64, labels ...string) {
	r.Gauge(name, func() float64 { return float64(f()) }, labels...)
}

// Buckets are the latency histogram upper bounds in seconds.
var Buckets = []float64{0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30}

// Histogram records latencies.
type Histogram struct {
	mu     sync.Mutex
	counts []int64
	sum    float64
	n      int64
}

// Observe records one duration.
func (h *Histogram) Observe(d time.Duration) {
	s := d.Seconds()
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.counts == nil {
		h.counts = make([]int64, len(Buckets))
	}
	for i, b := range Buckets {
		if s <= b {
			h.counts[i]++
		}
	}
	h.sum += s
	h.n++
}

// Quantile estimates the q-quantile from the buckets (upper bound).
func (h *Histogram) Quantile(q float64) float64 {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.n == 0 {
		return 0
	}
	target := int64(math.Ceil(q * float64(h.n)))
	for i, b := range Buckets {
		if h.counts[i] >= target {
			return b
		}
	}
	return math.Inf(1)
}

// Histogram returns (creating) the histogram for name and labels.
func (r *Registry) Histogram(name string, labels ...string) *Histogram {
	return series(r, r.hists, name, labels)
}

// Snapshot returns every series as a flat map (histograms as _count,
// _sum_seconds, _p50_seconds and _p99_seconds).
func (r *Registry) Snapshot() map[string]float64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]float64{}
	for k, c := range r.counters {
		out[k] = float64(c.Value())
	}
	for k, g := range r.gauges {
		out[k] = g()
	}
	for k, h := range r.hists {
		name, labels := splitSeries(k)
		h.mu.Lock()
		n, sum := h.n, h.sum
		h.mu.Unlock()
		out[name+"_count"+labels] = float64(n)
		out[name+"_sum_seconds"+labels] = sum
		out[name+"_p50_seconds"+labels] = h.Quantile(0.5)
		out[name+"_p99_seconds"+labels] = h.Quantile(0.99)
	}
	return out
}

func splitSeries(k string) (name, labels string) {
	if i := strings.IndexByte(k, '{'); i >= 0 {
		return k[:i], k[i:]
	}
	return k, ""
}

// WritePrometheus renders the registry in the Prometheus text format.
func (r *Registry) WritePrometheus(w io.Writer) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var lines []string
	types := map[string]string{}
	for k, c := range r.counters {
		n, _ := splitSeries(k)
		types[n] = "counter"
		lines = append(lines, fmt.Sprintf("%s %d", k, c.Value()))
	}
	for k, g := range r.gauges {
		n, _ := splitSeries(k)
		if _, ok := types[n]; !ok {
			types[n] = "gauge"
		}
		lines = append(lines, fmt.Sprintf("%s %g", k, g()))
	}
	for k, h := range r.hists {
		n, labels := splitSeries(k)
		types[n] = "histogram"
		inner := strings.TrimSuffix(strings.TrimPrefix(labels, "{"), "}")
		sep := ""
		if inner != "" {
			sep = ","
		}
		h.mu.Lock()
		counts := append([]int64(nil), h.counts...)
		if counts == nil {
			counts = make([]int64, len(Buckets))
		}
		for i, b := range Buckets {
			lines = append(lines, fmt.Sprintf("%s_bucket{%s%sle=\"%g\"} %d", n, inner, sep, b, counts[i]))
		}
		lines = append(lines, fmt.Sprintf("%s_bucket{%s%sle=\"+Inf\"} %d", n, inner, sep, h.n))
		lines = append(lines, fmt.Sprintf("%s_sum%s %g", n, labels, h.sum))
		lines = append(lines, fmt.Sprintf("%s_count%s %d", n, labels, h.n))
		h.mu.Unlock()
	}
	sort.Strings(lines)
	names := make([]string, 0, len(types))
	for n := range types {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	for _, n := range names {
		fmt.Fprintf(&b, "# TYPE %s %s\n", n, types[n])
		for _, l := range lines {
			if l == n || strings.HasPrefix(l, n+" ") || strings.HasPrefix(l, n+"{") || strings.HasPrefix(l, n+"_bucket") || strings.HasPrefix(l, n+"_sum") || strings.HasPrefix(l, n+"_count") {
				b.WriteString(l)
				b.WriteByte('\n')
			}
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
