package peerbench

import (
	"bytes"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

func TestPercentile(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		out := make([]time.Duration, len(v))
		for i, x := range v {
			out[i] = time.Duration(x) * time.Millisecond
		}
		return out
	}
	for _, tc := range []struct {
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{nil, 0.5, 0},
		{ms(7), 0.99, 7 * time.Millisecond},
		{ms(5, 1, 4, 2, 3), 0.5, 3 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.99, 10 * time.Millisecond},
		{ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10), 0.5, 5 * time.Millisecond},
	} {
		if got := percentile(tc.in, tc.p); got != tc.want {
			t.Errorf("percentile(%v, %v) = %v, want %v", tc.in, tc.p, got, tc.want)
		}
	}
}

// The process tree of this test process includes a child it starts, with
// the child's memory.
func TestTreeCountsChildren(t *testing.T) {
	before := tree(os.Getpid())
	if before.procs < 1 || before.rssBytes <= 0 {
		t.Fatalf("tree of this process: %+v", before)
	}
	cmd := exec.Command("sleep", "10")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	time.Sleep(50 * time.Millisecond)
	after := tree(os.Getpid())
	if after.procs != before.procs+1 {
		t.Errorf("processes: %d before the child, %d with it", before.procs, after.procs)
	}
	child := tree(cmd.Process.Pid)
	if child.procs != 1 || child.rssBytes <= 0 || child.ownNanos != child.cpuNanos {
		t.Errorf("the child's own tree: %+v", child)
	}
	if got := tree(1 << 30); got.procs != 0 {
		t.Errorf("a pid that does not exist has a tree: %+v", got)
	}
}

func TestWriteRatios(t *testing.T) {
	round := func(ops float64, cpu time.Duration) Round {
		return Round{SerialP50: time.Millisecond, SerialCPU: cpu, SerialOwnCPU: cpu / 2, Ops: ops, ConcCPU: cpu, ConcOwnCPU: cpu / 2}
	}
	res := []*Result{
		{Name: StdioDirect, Protocol: "2025-11-25", Rounds: []Round{round(4000, 100*time.Microsecond)}, PeakRSS: 50e6, Procs: 1},
		{Name: Bridge, Protocol: "2025-11-25", Rounds: []Round{round(1000, 400*time.Microsecond), round(1200, 400*time.Microsecond), round(800, 400*time.Microsecond)}, PeakRSS: 100e6, Procs: 3},
		{Name: MCPProxy, Protocol: "2025-11-25", Rounds: []Round{round(500, 800*time.Microsecond)}, PeakRSS: 200e6, Procs: 2},
		{Name: BridgeBaseline, Protocol: "2025-11-25", Rounds: []Round{round(500, 800*time.Microsecond)}, PeakRSS: 100e6, Procs: 3},
	}
	var buf bytes.Buffer
	Write(&buf, res, Config{Rounds: 3})
	out := buf.String()
	for _, want := range []string{
		"| toolrag bridge | 2025-11-25 | 1.00 / 0.00 ms | 400 µs (200) | 1000 (800–1200) |",
		"- toolrag bridge ÷ mcp-proxy: 2.0× the ops/s, 0.50× the memory, 0.50× the CPU per concurrent call",
		"- toolrag bridge ÷ its baseline: 2.00× the ops/s, 0.50× the CPU per serial call, 0.50× per concurrent call",
		"- toolrag bridge adds 0.00 ms per serial call (p50) and 300 µs of CPU per call over stdio direct",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q:\n%s", want, out)
		}
	}
}
