package usage

import (
	"fmt"
	"testing"
	"time"
)

func TestRecorderCounts(t *testing.T) {
	r := New()
	r.Call("alice", "echo", OK, 2*time.Millisecond)
	r.Call("alice", "echo", "upstream_error", 40*time.Millisecond)
	r.Call("alice", "", "unknown_tool", time.Millisecond)
	r.Call("bob", "fs", OK, 5*time.Millisecond)
	r.Call("bob", "fs", RateLimited, 0)
	r.RateLimitedRequest("bob")

	keys := r.Keys()
	if len(keys) != 2 || keys[0].ID != "alice" || keys[1].ID != "bob" {
		t.Fatalf("keys = %+v", keys)
	}
	tests := []struct {
		got                    Summary
		calls, errs, limited   int64
		wantP50Min, wantP50Max float64
	}{
		{keys[0], 3, 2, 0, 1.5, 2.7},
		{keys[1], 1, 0, 2, 4, 6.7},
	}
	for _, tc := range tests {
		if tc.got.Calls != tc.calls || tc.got.Errors != tc.errs || tc.got.RateLimited != tc.limited {
			t.Errorf("%s: calls/errors/limited = %d/%d/%d, want %d/%d/%d", tc.got.ID, tc.got.Calls, tc.got.Errors, tc.got.RateLimited, tc.calls, tc.errs, tc.limited)
		}
		if tc.got.P50ms < tc.wantP50Min || tc.got.P50ms > tc.wantP50Max {
			t.Errorf("%s: p50 = %v ms, want within [%v, %v]", tc.got.ID, tc.got.P50ms, tc.wantP50Min, tc.wantP50Max)
		}
		if tc.got.LastSeen.IsZero() {
			t.Errorf("%s: last seen not set", tc.got.ID)
		}
	}
	if keys[0].ErrorRate < 0.66 || keys[0].ErrorRate > 0.67 {
		t.Errorf("alice error rate = %v, want 2/3", keys[0].ErrorRate)
	}
	servers := r.Servers()
	if len(servers) != 2 || servers[0].ID != "echo" || servers[0].Calls != 2 || servers[0].Errors != 1 {
		t.Fatalf("servers = %+v", servers)
	}
	if servers[0].P99ms < 30 || servers[0].P99ms > 54 {
		t.Errorf("echo p99 = %v ms, want about 40", servers[0].P99ms)
	}
	buckets, p50, p99 := r.Latency()
	var n int64
	for _, b := range buckets {
		n += b.Count
	}
	if n != 4 || p50 <= 0 || p99 < p50 {
		t.Errorf("latency histogram: %d calls (want 4), p50 %v, p99 %v", n, p50, p99)
	}
}

func TestQuantileWithinOneBucket(t *testing.T) {
	for _, d := range []time.Duration{150 * time.Microsecond, 3 * time.Millisecond, 250 * time.Millisecond, 7 * time.Second} {
		var h Histogram
		for range 100 {
			h.observe(d)
		}
		got := h.Quantile(0.99)
		if got < d || float64(got) > float64(d)*1.34 {
			t.Errorf("p99 of %v = %v, want within one bucket above", d, got)
		}
	}
	var empty Histogram
	if empty.Quantile(0.5) != 0 {
		t.Error("empty histogram has a quantile")
	}
}

func TestRecorderIsBounded(t *testing.T) {
	r := New()
	for i := range MaxEntries + 50 {
		r.Call(fmt.Sprintf("k%d", i), fmt.Sprintf("s%d", i), OK, time.Millisecond)
	}
	keys := r.Keys()
	if len(keys) != MaxEntries+1 {
		t.Fatalf("%d keys tracked, want %d plus %q", len(keys), MaxEntries, Other)
	}
	for _, k := range keys {
		if k.ID == Other && k.Calls != 50 {
			t.Errorf("%q counts %d calls, want 50", Other, k.Calls)
		}
	}
}

func TestNilRecorderIsANoOp(t *testing.T) {
	var r *Recorder
	r.Call("k", "s", OK, time.Millisecond)
	r.RateLimitedRequest("k")
}
