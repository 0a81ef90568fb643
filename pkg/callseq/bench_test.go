package callseq_test

import (
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
)

// BenchmarkToolCalled is the call path's cost of the opt-in counts: one
// ToolCalled per successful tool call, 1,000 sessions over 50 tools, from
// every core at once; the counts go to a real SQLite store in the
// background (MaxPending 512, so flushes happen during the run).
func BenchmarkToolCalled(b *testing.B) {
	store := newStore(b)
	r := callseq.NewRecorder(callseq.RecorderConfig{Store: store})
	tools := make([]string, 50)
	for i := range tools {
		tools[i] = fmt.Sprintf("srv__tool_%02d", i)
	}
	sessions := make([]string, 1000)
	for i := range sessions {
		sessions[i] = fmt.Sprintf("session-%04d-0123456789abcdef", i)
	}
	var next atomic.Int64
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			i := next.Add(1)
			n := int64(len(sessions))
			r.ToolCalled("key", sessions[i%n], tools[(i/n)%int64(len(tools))])
		}
	})
	b.StopTimer()
	st := r.Stats()
	b.ReportMetric(float64(st.Counted)/float64(b.N), "counted/op")
}
