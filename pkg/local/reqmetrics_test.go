package local

import (
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/metrics"
)

// The cached series are the registry's own: the same names as before,
// counted by every caller, concurrent ones included.
func TestRequestMetrics(t *testing.T) {
	reg := metrics.New()
	m := newRequestMetrics(reg)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 100 {
				m.observe("tools/call", time.Millisecond)
			}
		}()
	}
	wg.Wait()
	m.observe("initialize", 2*time.Millisecond)
	snap := reg.Snapshot()
	for name, want := range map[string]float64{
		`mcp_requests_total{method="tools/call"}`:                 800,
		`mcp_requests_total{method="initialize"}`:                 1,
		`mcp_request_duration_seconds_count{method="tools/call"}`: 800,
		`mcp_request_duration_seconds_count{method="initialize"}`: 1,
	} {
		if snap[name] != want {
			t.Errorf("%s = %v, want %v (snapshot %v)", name, snap[name], want, snap)
		}
	}
	if c := reg.Counter("mcp_requests_total", "method=tools/call"); c.Value() != 800 {
		t.Errorf("the registry's counter says %d", c.Value())
	}
}
