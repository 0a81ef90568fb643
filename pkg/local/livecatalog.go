package local

import (
	"context"

	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
)

// The catalog follows its servers live (syncer.Live): an upstream that
// announces a change of its lists is re-synced alone after a short quiet
// time, with an incremental index update; clients whose view changed get
// list_changed from the gateway's MCP layer; a server that announces
// changes in a loop is damped and reported (GET /tool-rag/health).

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
	l := syncer.NewLive(g.log, func(ctx context.Context, server string) error {
		_, err := g.SyncServers(ctx, []string{server})
		return err
	})
	g.live.Store(l)
	g.Upstreams.OnListChanged(func(server, method string) { l.Announce(ctx, server, method) })
	context.AfterFunc(ctx, func() { g.Upstreams.OnListChanged(nil) })
}
