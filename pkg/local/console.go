package local

import (
	"context"
	"net/http"
	"sort"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/console"
	"github.com/toolrag/mcp-gateway/pkg/indexer"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// consoleSource is what the operator console reads from a local gateway.
type consoleSource struct {
	g       *Gateway
	servers map[string]upstream.ServerConfig
	keys    []policy.Key
}

func (s consoleSource) Servers(ctx context.Context) ([]console.Server, error) {
	stored, err := s.g.Store.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]catalog.Server{}
	for _, srv := range stored {
		byID[srv.ID] = srv
	}
	tools, err := s.g.Store.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	count, stale := map[string]int{}, map[string]int{}
	for _, t := range tools {
		count[t.Server]++
		if t.Status == "stale" {
			stale[t.Server]++
		}
	}
	probes := s.g.Health.Snapshot()
	out := make([]console.Server, 0, len(s.servers))
	for _, id := range s.g.Upstreams.Servers() {
		cs := console.Server{ID: id, Transport: s.servers[id].Transport, Status: console.StatusUp, Tools: count[id], Stale: stale[id]}
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
		case synced && srv.Status == "stale":
			cs.Status, cs.Reason = console.StatusStale, srv.LastError
		case synced && srv.Status == console.StatusDegraded:
			cs.Status, cs.Reason = console.StatusDegraded, srv.LastError
		case !synced:
			cs.Reason = "not synced yet"
		}
		out = append(out, cs)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (s consoleSource) Tools(ctx context.Context) ([]catalog.Tool, error) {
	return s.g.Store.ListTools(ctx)
}

func (s consoleSource) Keys(context.Context) ([]policy.Key, error) {
	if k := s.g.reloadedKeys.Load(); k != nil { // keys.yaml changed since start
		return *k, nil
	}
	return s.keys, nil
}

// newConsole builds the operator console (nil when it is turned off).
func (g *Gateway) newConsole(servers map[string]upstream.ServerConfig, keys []policy.Key) (*console.Console, error) {
	if g.Env.ConsolePath == "" {
		return nil, nil
	}
	return console.New(console.Config{
		Path:       g.Env.ConsolePath,
		Source:     consoleSource{g: g, servers: servers, keys: keys},
		Retrievers: []console.NamedRetriever{{Name: "default", Retriever: startupRetriever{g}}},
		Usage:      g.Usage,
		Sync: func(ctx context.Context) (any, error) {
			return g.Sync(ctx, indexer.ModeIncremental)
		},
		Poll: min(max(g.Env.HealthInterval, 2e9), 30e9),
	})
}

// mountConsole adds the console's routes to mux: the app without auth (it
// holds no data), the admin endpoints behind auth.
func mountConsole(mux *http.ServeMux, c *console.Console, authCfg auth.Config) {
	if c == nil {
		return
	}
	mux.Handle(c.Path(), c.App())
	mux.Handle(c.Path()+"/", c.App())
	mux.Handle(c.AdminPrefix()+"/", auth.Middleware(authCfg, c.Admin()))
}
