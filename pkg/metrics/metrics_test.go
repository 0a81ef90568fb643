package metrics

import (
	"strings"
	"testing"
	"time"
)

func TestRegistry(t *testing.T) {
	r := New()
	r.Counter("req_total", "route=retrieve").Add(2)
	r.Counter("req_total", "route=retrieve").Add(1)
	r.Gauge("tools_in_index", func() float64 { return 42 })
	h := r.Histogram("latency_seconds", "route=retrieve")
	for i := 0; i < 99; i++ {
		h.Observe(2 * time.Millisecond)
	}
	h.Observe(3 * time.Second)
	snap := r.Snapshot()
	if snap[`req_total{route="retrieve"}`] != 3 || snap["tools_in_index"] != 42 {
		t.Fatalf("snapshot: %v", snap)
	}
	if p50 := snap[`latency_seconds_p50_seconds{route="retrieve"}`]; p50 != 0.0025 {
		t.Errorf("p50 = %v", p50)
	}
	if p99 := h.Quantile(0.999); p99 != 5 {
		t.Errorf("p99.9 = %v", p99)
	}
	var b strings.Builder
	if err := r.WritePrometheus(&b); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"# TYPE req_total counter", `req_total{route="retrieve"} 3`,
		"# TYPE tools_in_index gauge", "tools_in_index 42",
		"# TYPE latency_seconds histogram", `latency_seconds_bucket{route="retrieve",le="+Inf"} 100`,
		`latency_seconds_count{route="retrieve"} 100`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("prometheus output lacks %q:\n%s", want, out)
		}
	}
}
