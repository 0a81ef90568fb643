package usage

import (
	"fmt"
	"testing"
	"time"
)

func TestRetrievalCounts(t *testing.T) {
	r := New()
	r.Retrieval("alice", FindTools, []string{Strong})
	r.Retrieval("alice", FindTools, []string{Weak, Partial, ""})
	r.Retrieval("bob", REST, []string{Weak})
	got := r.Retrievals()
	if got.Requests != 3 || got.BySource[FindTools] != 2 || got.BySource[REST] != 1 || got.Queries != 5 {
		t.Errorf("counts = %+v", got)
	}
	want := map[string]int64{Strong: 1, Partial: 1, Weak: 2, None: 1}
	for k, v := range want {
		if got.ByMatch[k] != v {
			t.Errorf("%s = %d, want %d", k, got.ByMatch[k], v)
		}
	}
	if got.WeakShare != 3.0/5 {
		t.Errorf("weak share = %v, want 0.6 (2 weak and 1 with nothing, of 5)", got.WeakShare)
	}
	keys := r.Keys()
	if len(keys) != 2 || keys[0].Retrievals != 2 || keys[1].Retrievals != 1 || keys[0].Calls != 0 {
		t.Errorf("per key = %+v", keys)
	}
	if empty := New().Retrievals(); empty.WeakShare != 0 || empty.ByMatch[Weak] != 0 {
		t.Errorf("empty = %+v", empty)
	}
}

func TestRecentCalls(t *testing.T) {
	r := New()
	for i := range RecentCalls + 5 {
		outcome := OK
		if i%10 == 0 {
			outcome = "upstream_error"
		}
		r.ToolCall("k", fmt.Sprintf("echo__t%d", i), outcome, time.Millisecond)
	}
	calls, errs := r.Recent()
	if len(calls) != RecentCalls || calls[0].Tool != fmt.Sprintf("echo__t%d", RecentCalls+4) || calls[0].KeyID != "k" || calls[0].Ms != 1 {
		t.Errorf("recent = %d calls, newest %+v", len(calls), calls[0])
	}
	if len(errs) != 3 || errs[0].Tool != "echo__t20" || errs[2].Tool != "echo__t0" || errs[0].Outcome != "upstream_error" {
		t.Errorf("errors = %+v", errs)
	}
}

func TestTimeline(t *testing.T) {
	r := New()
	base := time.Date(2026, 1, 2, 10, 0, 30, 0, time.UTC)
	now := base
	r.now = func() time.Time { return now }
	if tl := r.Timeline(); len(tl) != 0 {
		t.Fatalf("timeline without calls = %v", tl)
	}
	r.Call("k", "s", OK, 2*time.Millisecond)
	r.Call("k", "s", "tool_error", 20*time.Millisecond)
	now = base.Add(2 * time.Minute)
	r.Call("k", "s", OK, 5*time.Millisecond)
	r.Call("k", "s", RateLimited, 0) // not a call: no latency
	tl := r.Timeline()
	if len(tl) != 3 {
		t.Fatalf("timeline = %+v, want 3 minutes", tl)
	}
	if tl[0].Calls != 2 || tl[0].Errors != 1 || tl[1].Calls != 0 || tl[2].Calls != 1 || !tl[0].Start.Equal(base.Truncate(time.Minute)) {
		t.Errorf("timeline = %+v", tl)
	}
	if tl[0].P99ms < 15 || tl[0].P99ms > 27 || tl[2].P50ms < 4 || tl[2].P50ms > 6.7 {
		t.Errorf("latency = %+v", tl)
	}
	// An hour later the old minutes are gone; the slot is reused.
	now = base.Add((TimelineMinutes + 2) * time.Minute)
	r.Call("k", "s", OK, time.Millisecond)
	if tl := r.Timeline(); len(tl) != 1 || tl[0].Calls != 1 {
		t.Errorf("after an hour: %+v", tl)
	}
}
