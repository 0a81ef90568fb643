package app

import (
	"context"
	"net/http"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/console"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// newConsole builds the operator console (nil when Env.ConsolePath is
// off): the same in every runtime, over the app's catalog copy, health
// view and upstreams, with the runtime's key list and "sync now".
func (a *App) newConsole() (*console.Console, error) {
	if a.o.Env.ConsolePath == "" {
		return nil, nil
	}
	return console.New(console.Config{
		Path:        a.o.Env.ConsolePath,
		Source:      consoleSource{a},
		Retrievers:  []console.NamedRetriever{{Name: "default", Retriever: retrieval{a: a}}},
		Usage:       a.Usage,
		Sync:        a.b.Sync,
		Poll:        a.o.ConsolePoll,
		TraceURL:    tracing.TraceURL(),
		Tracing:     tracing.Enabled(),
		Connections: connectionsOf(a.b.Identity),
	})
}

// mountConsole adds the console's routes to mux: the app without auth (it
// holds no data), the admin endpoints behind auth and the readiness gate.
func (a *App) mountConsole(mux *http.ServeMux, c *console.Console, authCfg auth.Config) {
	if c == nil {
		return
	}
	mux.Handle(c.Path(), c.App())
	mux.Handle(c.Path()+"/", c.App())
	mux.Handle(c.AdminPrefix()+"/", auth.Middleware(authCfg, a.gate(c.Admin())))
}

// consoleSource is what the console reads: the configured upstreams, the
// health view, the catalog copy and the runtime's keys.
type consoleSource struct{ a *App }

func (s consoleSource) Servers(ctx context.Context) ([]console.Server, error) {
	a := s.a
	stored, err := a.Catalog.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]catalog.Server{}
	for _, srv := range stored {
		byID[srv.ID] = srv
	}
	tools, err := a.Catalog.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	count, stale := map[string]int{}, map[string]int{}
	for _, t := range tools {
		count[t.Server]++
		if t.Status == catalog.StatusStale {
			stale[t.Server]++
		}
	}
	probes := a.b.Health.Snapshot()
	ids := a.b.Upstreams.Servers() // sorted
	out := make([]console.Server, 0, len(ids))
	for _, id := range ids {
		cs := console.Server{ID: id, Transport: a.b.Upstreams.Transport(id), Status: console.StatusUp, Tools: count[id], Stale: stale[id]}
		if cs.Transport == "" {
			cs.Transport = "stdio"
		}
		srv, synced := byID[id]
		if synced {
			cs.LastSync = srv.SyncedAt
		}
		switch p, probed := probes[id]; {
		case probed && !p.Up:
			cs.Status, cs.Reason = console.StatusDown, p.Error
		case synced && srv.Status == catalog.StatusStale:
			cs.Status, cs.Reason = console.StatusStale, srv.LastError
		case synced && srv.Status == console.StatusDegraded:
			cs.Status, cs.Reason = console.StatusDegraded, srv.LastError
		case !synced:
			cs.Reason = "not synced yet"
		}
		out = append(out, cs)
	}
	connectedCounts(ctx, a.b.Identity, out)
	return out, nil
}

func (s consoleSource) Tools(ctx context.Context) ([]catalog.Tool, error) {
	return s.a.Catalog.ListTools(ctx)
}

func (s consoleSource) Keys(ctx context.Context) ([]policy.Key, error) {
	if s.a.b.Keys == nil || s.a.b.KeyList == nil {
		return nil, nil
	}
	return s.a.b.KeyList(ctx)
}
