package local

import (
	"context"
	"fmt"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
)

// The catalog follows its servers live: an upstream that announces a
// change of its tools, prompts or resources (notifications/*/list_changed)
// is re-synced alone, after a short quiet time that gathers a burst of
// announcements into one sync, and the index is updated incrementally.
// Clients whose view changed get list_changed from the gateway's MCP
// layer. A server that announces changes in a loop is damped: past
// liveMaxSyncs syncs in liveWindow its announcements are ignored until the
// window has passed, and it is reported (log, GET /tool-rag/health).

const (
	liveDebounce = 300 * time.Millisecond
	liveWindow   = time.Minute
	liveMaxSyncs = 10
)

type liveCatalog struct {
	sync func(ctx context.Context, server string) error
	log  *slog.Logger

	debounce time.Duration
	window   time.Duration
	max      int

	mu      sync.Mutex
	pending map[string]bool
	recent  map[string][]time.Time // sync starts within the window
	damped  map[string]time.Time   // server → end of its damping
	ignored map[string]int         // announcements ignored while damped
}

func newLiveCatalog(log *slog.Logger, sync func(ctx context.Context, server string) error) *liveCatalog {
	return &liveCatalog{sync: sync, log: log, debounce: liveDebounce, window: liveWindow, max: liveMaxSyncs,
		pending: map[string]bool{}, recent: map[string][]time.Time{}, damped: map[string]time.Time{}, ignored: map[string]int{}}
}

// announce handles one list_changed of server.
func (l *liveCatalog) announce(ctx context.Context, server, method string) {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if until, ok := l.damped[server]; ok {
		if now.Before(until) {
			l.ignored[server]++
			return
		}
		delete(l.damped, server)
		delete(l.ignored, server)
	}
	if l.pending[server] {
		return // a sync is already due: it will see this change too
	}
	kept := l.recent[server][:0]
	for _, t := range l.recent[server] {
		if now.Sub(t) < l.window {
			kept = append(kept, t)
		}
	}
	l.recent[server] = kept
	if len(kept) >= l.max {
		l.damped[server] = kept[0].Add(l.window)
		l.log.Warn("upstream announces list changes in a loop; its announcements are ignored for a while (the scheduled sync still runs)",
			"server", server, "syncs", len(kept), "window", l.window, "until", l.damped[server].Format(time.RFC3339))
		return
	}
	l.pending[server] = true
	l.recent[server] = append(kept, now.Add(l.debounce))
	time.AfterFunc(l.debounce, func() {
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
	})
}

// report says which servers are damped now (server → why).
func (l *liveCatalog) report() map[string]string {
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
				l.max, l.window, until.UTC().Format(time.RFC3339), l.ignored[id])
		}
	}
	return out
}

// SyncServers syncs the given servers alone (no server is purged) and
// applies the catalog with an incremental index update.
func (g *Runtime) SyncServers(ctx context.Context, servers []string) (syncer.Report, error) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	rep, err := syncer.Run(ctx, syncer.Config{
		Upstreams: g.Upstreams, Store: g.Store, Parallel: g.Env.SyncParallel,
		Timeout: g.Env.SyncTimeout, Logger: g.log, MaxTools: g.Env.MaxTools, Servers: servers,
	})
	if err != nil {
		return rep, err
	}
	res, err := g.Apply(ctx, app.Change{Index: indexer.ModeIncremental})
	if res.IndexErr != nil {
		g.log.Error("index build failed; retrieval falls back to keyword search", "error", res.IndexErr)
	}
	return rep, err
}

// followLists makes the catalog follow its upstreams' list changes until
// ctx ends.
func (g *Runtime) followLists(ctx context.Context) {
	l := newLiveCatalog(g.log, func(ctx context.Context, server string) error {
		_, err := g.SyncServers(ctx, []string{server})
		return err
	})
	g.live.Store(l)
	g.Upstreams.OnListChanged(func(server, method string) { l.announce(ctx, server, method) })
	context.AfterFunc(ctx, func() { g.Upstreams.OnListChanged(nil) })
}
