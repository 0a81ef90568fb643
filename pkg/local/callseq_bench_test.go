package local

import (
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// BenchmarkRunToolCallSequences: run_tool (echo over stdio, a legacy
// session) through the local gateway with TOOL_RAG_CALL_SEQUENCES off and
// on; each call alternates echo and reverse, so with the feature on every
// call counts a pair. Run with -count to interleave the two.
func BenchmarkRunToolCallSequences(b *testing.B) {
	for _, mode := range []string{"off", "on"} {
		b.Run("callseq="+mode, func(b *testing.B) {
			vars := map[string]string{}
			if mode == "on" {
				vars["TOOL_RAG_CALL_SEQUENCES"] = "1"
			}
			e := startGatewayB(b, "", vars)
			c, _ := testenv.Connect(b, e.url, testenv.MCPClient{Key: "k-agent", Legacy: true, Name: "bench"})
			names := []string{"echo__echo", "echo__reverse"}
			args := map[string]any{"text": "hi"}
			call := func(i int) {
				res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": names[i%2], "arguments": args})
				if err != nil || res.IsError {
					b.Fatalf("run_tool: %v %+v", err, res)
				}
			}
			for i := range 20 {
				call(i)
			}
			b.ResetTimer()
			i := 0
			for b.Loop() {
				call(i)
				i++
			}
			b.StopTimer()
			if mode == "on" {
				if st := e.g.App.CallSeq.Stats(); st.Counted < int64(b.N) {
					b.Fatalf("counted %d pairs in %d calls", st.Counted, b.N)
				}
			}
		})
	}
}
