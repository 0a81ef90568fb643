package syncer

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Live makes a catalog follow its servers: a server that announces a
// change of its tools, prompts or resources (notifications/*/list_changed)
// is synced alone, after a short quiet time that gathers a burst of
// announcements into one sync. A server that announces changes in a loop
// is damped: past Max syncs in Window its announcements are ignored until
// the window has passed, and it is reported (Report). The local runtime
// syncs in process; on AWS the process holding the upstream connection
// (the stdio bridge) invokes the sync function.
type Live struct {
	// Debounce is the quiet time before a sync (zero: sync at once, in
	// the announcing goroutine, for a process that may be frozen between
	// requests); Window and Max bound the syncs of one server.
	Debounce time.Duration
	Window   time.Duration
	Max      int

	sync func(ctx context.Context, server string) error
	log  *slog.Logger

	mu      sync.Mutex
	pending map[string]bool
	recent  map[string][]time.Time // sync starts within the window
	damped  map[string]time.Time   // server → end of its damping
	ignored map[string]int         // announcements ignored while damped
}

// Defaults of Live.
const (
	LiveDebounce = 300 * time.Millisecond
	LiveWindow   = time.Minute
	LiveMaxSyncs = 10
)

// NewLive returns a Live with the default debounce, window and maximum
// that calls sync for a server that announced a change.
func NewLive(log *slog.Logger, sync func(ctx context.Context, server string) error) *Live {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Live{Debounce: LiveDebounce, Window: LiveWindow, Max: LiveMaxSyncs, sync: sync, log: log,
		pending: map[string]bool{}, recent: map[string][]time.Time{}, damped: map[string]time.Time{}, ignored: map[string]int{}}
}

// Announce handles one list_changed (method) of server.
func (l *Live) Announce(ctx context.Context, server, method string) {
	now := time.Now()
	l.mu.Lock()
	if until, ok := l.damped[server]; ok {
		if now.Before(until) {
			l.ignored[server]++
			l.mu.Unlock()
			return
		}
		delete(l.damped, server)
		delete(l.ignored, server)
	}
	if l.pending[server] {
		l.mu.Unlock()
		return // a sync is already due: it will see this change too
	}
	kept := l.recent[server][:0]
	for _, t := range l.recent[server] {
		if now.Sub(t) < l.Window {
			kept = append(kept, t)
		}
	}
	l.recent[server] = kept
	if len(kept) >= l.Max {
		l.damped[server] = kept[0].Add(l.Window)
		l.log.Warn("upstream announces list changes in a loop; its announcements are ignored for a while (the scheduled sync still runs)",
			"server", server, "syncs", len(kept), "window", l.Window, "until", l.damped[server].Format(time.RFC3339))
		l.mu.Unlock()
		return
	}
	l.pending[server] = true
	l.recent[server] = append(kept, now.Add(l.Debounce))
	l.mu.Unlock()
	run := func() {
		l.mu.Lock()
		delete(l.pending, server)
		l.mu.Unlock()
		if ctx.Err() != nil {
			return
		}
		l.log.Info("upstream announced a list change; syncing it", "server", server, "notification", method)
		if err := l.sync(ctx, server); err != nil {
			l.log.Error("sync after an upstream's list change failed", "server", server, "error", err)
		}
	}
	if l.Debounce <= 0 {
		run()
		return
	}
	time.AfterFunc(l.Debounce, run)
}

// Report says which servers are damped now (server → why).
func (l *Live) Report() map[string]string {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	out := map[string]string{}
	ids := make([]string, 0, len(l.damped))
	for id := range l.damped {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		if until := l.damped[id]; now.Before(until) {
			out[id] = fmt.Sprintf("announced list changes more than %d times in %s; announcements are ignored until %s (%d ignored so far)",
				l.Max, l.Window, until.UTC().Format(time.RFC3339), l.ignored[id])
		}
	}
	return out
}
