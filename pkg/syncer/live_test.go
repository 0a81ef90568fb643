package syncer

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestFidelityLiveDamping: a server that announces changes in a loop is
// synced at most Max times per Window, then ignored and reported; another
// server is not affected. With no debounce the sync runs in the
// announcing goroutine (a Lambda-style process may freeze after it).
func TestFidelityLiveDamping(t *testing.T) {
	for _, debounce := range []time.Duration{time.Millisecond, 0} {
		var syncs atomic.Int32
		done := make(chan struct{}, 100)
		l := NewLive(nil, func(ctx context.Context, server string) error {
			syncs.Add(1)
			done <- struct{}{}
			return nil
		})
		l.Debounce, l.Max, l.Window = debounce, 3, time.Hour
		ctx := context.Background()
		for i := 0; i < 3; i++ {
			l.Announce(ctx, "loopy", "notifications/tools/list_changed")
			if debounce == 0 && syncs.Load() != int32(i+1) {
				t.Fatalf("debounce 0: announcement %d was not synced before Announce returned", i+1)
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatalf("announcement %d was not synced", i+1)
			}
		}
		for i := 0; i < 10; i++ {
			l.Announce(ctx, "loopy", "notifications/tools/list_changed")
		}
		time.Sleep(50 * time.Millisecond)
		if n := syncs.Load(); n != 3 {
			t.Errorf("debounce %s: a server announcing in a loop was synced %d times, want 3", debounce, n)
		}
		rep := l.Report() // the first of the 10 damps, the other 9 are ignored
		if !strings.Contains(rep["loopy"], "9 ignored") {
			b, _ := json.Marshal(rep)
			t.Errorf("damped server not reported: %s", b)
		}
		l.Announce(ctx, "calm", "notifications/prompts/list_changed")
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Error("another server's announcement was not synced")
		}
	}
}
