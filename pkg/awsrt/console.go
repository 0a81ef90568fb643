package awsrt

import (
	"context"
	"encoding/json"
	"net/http"
	"sort"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/console"
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// consoleSource is what the operator console reads on AWS: the registry
// and its health (written by the health function), this instance's
// catalog copy, and the keys table.
type consoleSource struct{ g *Gateway }

func (s consoleSource) Servers(ctx context.Context) ([]console.Server, error) {
	g := s.g
	reg, err := g.Registry.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	probes, err := g.Registry.Health(ctx)
	if err != nil {
		return nil, err
	}
	stored, err := g.catalog.ListServers(ctx)
	if err != nil {
		return nil, err
	}
	byID := map[string]catalog.Server{}
	for _, srv := range stored {
		byID[srv.ID] = srv
	}
	tools, err := g.catalog.ListTools(ctx)
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
	out := make([]console.Server, 0, len(reg))
	for id, raw := range reg {
		var cfg struct {
			Transport string `json:"transport"`
		}
		_ = json.Unmarshal(raw, &cfg)
		cs := console.Server{ID: id, Transport: cfg.Transport, Status: console.StatusUp, Tools: count[id], Stale: stale[id]}
		srv, synced := byID[id]
		if synced {
			cs.LastSync = srv.SyncedAt
		}
		switch h := probes[id]; {
		case h.Status == dynamo.HealthDown:
			cs.Status, cs.Reason = console.StatusDown, h.Error
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
	return s.g.catalog.ListTools(ctx)
}

func (s consoleSource) Keys(ctx context.Context) ([]policy.Key, error) { return s.g.Keys.List(ctx) }

// newConsole builds the operator console (nil when it is turned off).
// "Sync now" invokes the sync function, as /tool-rag/reindex does; the
// usage figures are this instance's since its cold start.
func (g *Gateway) newConsole() (*console.Console, error) {
	if g.cfg.Env.ConsolePath == "" {
		return nil, nil
	}
	return console.New(console.Config{
		Path:       g.cfg.Env.ConsolePath,
		Source:     consoleSource{g},
		Retrievers: []console.NamedRetriever{{Name: "default", Retriever: g.Retriever}},
		Usage:      g.Usage,
		Sync: func(ctx context.Context) (any, error) {
			return reindexer{g}.Reindex(ctx, "incremental")
		},
	})
}

// mountConsole adds the console's routes: the app without auth (it holds
// no data), the admin endpoints behind auth and after the first load.
func (g *Gateway) mountConsole(mux *http.ServeMux, c *console.Console, authCfg auth.Config) {
	if c == nil {
		return
	}
	mux.Handle(c.Path(), c.App())
	mux.Handle(c.Path()+"/", c.App())
	mux.Handle(c.AdminPrefix()+"/", auth.Middleware(authCfg, g.afterLoad(c.Admin())))
}
