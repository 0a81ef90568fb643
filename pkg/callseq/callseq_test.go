package callseq_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
)

func newStore(t testing.TB) *sqlite.Store {
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "cat.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// clock is a manual clock.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func pairs(t *testing.T, s callseq.Store) map[string]int64 {
	t.Helper()
	cs, err := s.ListCallSequences(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, c := range cs {
		out[c.From+">"+c.To] += c.N
	}
	return out
}

func TestRecorderCountsCallAfterInTheSameSession(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	clk := &clock{now: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)}
	r := callseq.NewRecorder(callseq.RecorderConfig{Store: store, Window: 10 * time.Minute, FlushEvery: time.Hour, Now: clk.Now})

	steps := []struct {
		key, session, tool string
		wait               time.Duration
	}{
		{"k1", "s1", "web__navigate", 0},
		{"k2", "s2", "fs__read_file", 0},            // another session in between
		{"k1", "s1", "web__screenshot", 0},          // s1: navigate → screenshot
		{"k1", "s1", "web__screenshot", 0},          // a repeat counts nothing
		{"k2", "s2", "fs__write_file", time.Minute}, // s2: read → write
		{"k1", "", "web__navigate", 0},              // no session: the key's previous session-less call
		{"k1", "", "web__screenshot", 0},            // navigate → screenshot
		{"k1", "", "web__click", 3 * time.Minute},   // after the key window: nothing
		{"", "", "web__navigate", 0},                // no key, no session: nothing
		{"", "", "web__click", 0},
		{"k3", "s1", "web__click", 0},                   // another key in s1's id continues nothing
		{"k1", "s1", "web__navigate", 11 * time.Minute}, // after the window: nothing
		{"k1", "s1", "web__click", 0},                   // navigate → click
		{"k1", "s3", "web__navigate", 0},
		{"k1", "s3", "web__screenshot", 0}, // navigate → screenshot again
	}
	for _, s := range steps {
		clk.add(s.wait)
		r.ToolCalled(s.key, s.session, s.tool)
	}
	if got := pairs(t, store); len(got) != 0 {
		t.Fatalf("counts were written before a flush: %v", got)
	}
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"web__navigate>web__screenshot": 3,
		"fs__read_file>fs__write_file":  1,
		"web__navigate>web__click":      1,
	}
	if got := pairs(t, store); !reflect.DeepEqual(got, want) {
		t.Fatalf("counts:\n got %v\nwant %v", got, want)
	}
	if st := r.Stats(); st.Counted != 5 || st.Flushed != 3 || st.Errors != 0 {
		t.Fatalf("stats %+v, want 5 counted, 3 flushed", st)
	}
	cs, _ := store.ListCallSequences(ctx)
	for _, c := range cs {
		if c.Day != callseq.Day(clk.Now()) {
			t.Fatalf("pair %s→%s has day %d, want %d", c.From, c.To, c.Day, callseq.Day(clk.Now()))
		}
	}
}

// Counts reach the store on their own after FlushEvery, and when
// MaxPending distinct pairs are pending.
func TestRecorderFlushesInTheBackground(t *testing.T) {
	store := newStore(t)
	r := callseq.NewRecorder(callseq.RecorderConfig{Store: store, FlushEvery: 20 * time.Millisecond})
	r.ToolCalled("key", "s", "a__x")
	r.ToolCalled("key", "s", "a__y")
	waitFor(t, func() bool { return pairs(t, store)["a__x>a__y"] == 1 })

	store2 := newStore(t)
	r2 := callseq.NewRecorder(callseq.RecorderConfig{Store: store2, FlushEvery: time.Hour, MaxPending: 3})
	for _, tool := range []string{"a__1", "a__2", "a__3", "a__4"} {
		r2.ToolCalled("key", "s", tool)
	}
	waitFor(t, func() bool { return len(pairs(t, store2)) == 3 })
}

func waitFor(t *testing.T, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// failing fails AddCallSequences while fail is set (a store outage in
// front of the real store).
type failing struct {
	*sqlite.Store
	fail atomic.Bool
}

func (f *failing) AddCallSequences(ctx context.Context, cs []callseq.Count) error {
	if f.fail.Load() {
		return errors.New("store unavailable")
	}
	return f.Store.AddCallSequences(ctx, cs)
}

func TestRecorderKeepsCountsWhileTheStoreFails(t *testing.T) {
	ctx := context.Background()
	store := &failing{Store: newStore(t)}
	store.fail.Store(true)
	r := callseq.NewRecorder(callseq.RecorderConfig{Store: store, FlushEvery: time.Hour})
	r.ToolCalled("key", "s", "a__x")
	r.ToolCalled("key", "s", "a__y")
	if err := r.Flush(ctx); err == nil {
		t.Fatal("Flush did not report the store's error")
	}
	r.ToolCalled("key", "s", "a__x")
	store.fail.Store(false)
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"a__x>a__y": 1, "a__y>a__x": 1}
	if got := pairs(t, store.Store); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the outage: %v, want %v", got, want)
	}
	if st := r.Stats(); st.Errors != 1 || st.Dropped != 0 {
		t.Fatalf("stats %+v, want 1 error and nothing dropped", st)
	}
}

// The sessions remembered are bounded: beyond MaxSessions the least
// recent are forgotten (their next call starts afresh).
func TestRecorderForgetsTheLeastRecentSessions(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	r := callseq.NewRecorder(callseq.RecorderConfig{Store: store, MaxSessions: 4, FlushEvery: time.Hour})
	r.ToolCalled("key", "old", "a__x")
	for _, s := range []string{"s1", "s2", "s3", "s4", "s5"} {
		r.ToolCalled("key", s, "a__x")
	}
	r.ToolCalled("key", "old", "a__y") // forgotten: counts nothing
	r.ToolCalled("key", "s5", "a__z")  // remembered
	if err := r.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if got, want := pairs(t, store), map[string]int64{"a__x>a__z": 1}; !reflect.DeepEqual(got, want) {
		t.Fatalf("counts %v, want %v", got, want)
	}
}

func TestTableSmoothsAndOrders(t *testing.T) {
	exists := func(id string) bool { return id != "gone__t" }
	tab := callseq.NewTable([]callseq.Count{
		{From: "web__navigate", To: "web__screenshot", N: 8},
		{From: "web__navigate", To: "web__click", N: 2},
		{From: "web__screenshot", To: "fs__write_file", N: 2},
		{From: "web__screenshot", To: "web__click", N: 1},    // counted once: not listed
		{From: "web__navigate", To: "gone__t", N: 50},        // a tool that left the catalog
		{From: "web__navigate", To: "web__screenshot", N: 2}, // the same pair again
	}, exists)
	if tab.Pairs() != 4 {
		t.Fatalf("pairs %d, want 4 (listed or not)", tab.Pairs())
	}
	got := tab.With("web__navigate")
	// navigate → screenshot: 10 / (12 + 5); navigate → click: 2 / (12 + 5).
	if len(got) != 2 || got[0].Tool != "web__screenshot" || !got[0].Strong || got[0].N != 10 ||
		got[1].Tool != "web__click" || got[1].Strong {
		t.Fatalf("with navigate: %+v", got)
	}
	if d := got[0].Share - 10.0/17; d > 1e-9 || d < -1e-9 {
		t.Fatalf("share %v, want 10/17", got[0].Share)
	}
	// screenshot: navigate before it (10 of the 10 calls into it) and
	// write_file after it (twice: weak); click once (not listed).
	got = tab.With("web__screenshot")
	if len(got) != 2 || got[0].Tool != "web__navigate" || !got[0].Strong || got[1].Tool != "fs__write_file" || got[1].Strong {
		t.Fatalf("with screenshot: %+v", got)
	}
	if tab.With("gone__t") != nil || tab.With("nothing") != nil {
		t.Fatal("a tool without pairs has edges")
	}
	var nilTab *callseq.Table
	if nilTab.With("x") != nil || nilTab.Pairs() != 0 {
		t.Fatal("a nil table answers")
	}
}

func TestPruneDropsGoneToolsAndOldPairs(t *testing.T) {
	ctx := context.Background()
	store := newStore(t)
	if err := store.AddCallSequences(ctx, []callseq.Count{
		{From: "a__x", To: "a__y", N: 3, Day: 100},
		{From: "a__x", To: "gone__t", N: 3, Day: 100},
		{From: "gone__t", To: "a__y", N: 3, Day: 100},
		{From: "a__y", To: "a__x", N: 1, Day: 10},
	}); err != nil {
		t.Fatal(err)
	}
	kept, err := callseq.Prune(ctx, store, func(id string) bool { return id != "gone__t" }, 50)
	if err != nil {
		t.Fatal(err)
	}
	want := []callseq.Count{{From: "a__x", To: "a__y", N: 3, Day: 100}}
	if !reflect.DeepEqual(kept, want) {
		t.Fatalf("kept %v, want %v", kept, want)
	}
	if got := pairs(t, store); !reflect.DeepEqual(got, map[string]int64{"a__x>a__y": 3}) {
		t.Fatalf("store after Prune: %v", got)
	}
}
