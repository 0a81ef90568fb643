// Package local runs the gateway as one process: YAML configuration, the
// SQLite catalog and an index directory on disk, stdio upstreams as pooled
// subprocesses, the offline embedder, and background resync and health
// loops. `toolrag serve` is a thin wrapper around Run.
package local

import (
	"context"

	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/internal/redact"

	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/rerank"
	"github.com/toolrag/mcp-gateway/pkg/resultstore"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Runtime is a running local gateway: the assembled app (pkg/app) over
// the SQLite catalog, an index directory, in-memory sessions and the
// upstream processes.
type Runtime struct {
	*app.App
	Env       config.Env
	Upstreams *upstream.Manager
	Store     *sqlite.Store
	Health    *health.Tracker
	log       *slog.Logger

	syncMu   sync.Mutex
	lastSync atomic.Pointer[syncer.Report]
	live     atomic.Pointer[syncer.Live] // set by Background (livecatalog.go)
	// configuration reloads (reload.go)
	keySet       *auth.KeySet
	oauth        *oauth.Resource              // its `oauth:` section is reloaded with the keys
	reloadedKeys atomic.Pointer[[]policy.Key] // the keys of the last reload, for the console
	getenv       func(string) string
	cfgMu        sync.Mutex
	// what keys.yaml and the registry files held when last loaded
	keyFiles, registryFiles *config.FileSet
	identity                *identity // per-principal upstream identity (identity.go); nil without
}

// Options tunes New beyond the environment.
type Options struct {
	Getenv func(string) string // default os.Getenv
	Logger *slog.Logger
	// Embedder overrides TOOL_RAG_EMBEDDER (tests).
	Embedder embed.Embedder
	// StartupWait bounds how long find_tools and /tool-rag/retrieve wait
	// for the first sync when the gateway started with an empty catalog
	// (default 20s; a request's own deadline also bounds it).
	StartupWait time.Duration
}

// New loads configuration and builds every part, without syncing yet.
func New(ctx context.Context, o Options) (*Runtime, error) {
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	log := o.Logger
	if log == nil {
		log = slog.Default()
	}
	log = slog.New(redact.Handler(log.Handler())) // no credential or session id in any log line
	env, err := config.FromEnv(o.Getenv)
	if err != nil {
		return nil, err
	}
	servers, err := config.LoadRegistry(env.RegistryPath, env.GeneratedPath, o.Getenv)
	if err != nil {
		return nil, err
	}
	var keys auth.KeyLookup
	var keySet *auth.KeySet
	var keyList []policy.Key
	if !env.WithoutAuth {
		list, err := config.LoadKeys(env.KeysPath)
		if err != nil {
			return nil, fmt.Errorf("%w (copy config/keys.example.yaml, or set TOOL_RAG_WITHOUT_AUTH=1 on a trusted network)", err)
		}
		if err := config.CheckKeyGrants(env.KeysPath, list, servers, log); err != nil {
			return nil, err
		}
		keySet = auth.NewKeySet(list) // replaced when keys.yaml changes (WatchConfig)
		keys, keyList = keySet, list
	}
	resource, err := oauthResource(ctx, env, o.Getenv, keyList, log)
	if err != nil {
		return nil, err
	}
	g := &Runtime{Env: env, log: log, Health: health.NewTracker(), keySet: keySet, getenv: o.Getenv, oauth: resource}
	g.keyFiles, g.registryFiles = config.NewFileSet(env.KeysPath), config.NewFileSet(env.RegistryPath, env.GeneratedPath)
	g.Upstreams = upstream.NewManager(env.UpstreamOptions(log))
	g.Upstreams.SetServers(servers)
	if dir := filepath.Dir(env.DBPath); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	if g.Store, err = sqlite.Open(ctx, env.DBPath); err != nil {
		return nil, err
	}
	sessions := session.NewMemory() // also the task records
	b := app.Backend{Runtime: "local", Catalog: g.Store, Keys: keys, OAuth: resource, Sessions: sessions, Tasks: sessions,
		Index: indexpub.NewDirBucket(env.IndexDir), Upstreams: g.Upstreams, Health: g.Health,
		Embedder: o.Embedder, Reindexer: reindexer{g}, Details: g.details, CallSeq: g.Store, PruneCallSeq: true,
		KeyList: func(context.Context) ([]policy.Key, error) {
			if k := g.reloadedKeys.Load(); k != nil { // keys.yaml changed since start
				return *k, nil
			}
			return keyList, nil
		},
		Sync: func(ctx context.Context) (any, error) { return g.Sync(ctx, indexer.ModeIncremental) }}
	// Several gateways behind one address accept each other's
	// input_required state when they share TOOL_RAG_STATE_KEY.
	if k := o.Getenv("TOOL_RAG_STATE_KEY"); k != "" {
		b.StateKey = []byte(k)
	}
	if env.MaxSpillBytes > env.MaxResultBytes {
		if b.Results, err = resultstore.NewDir(env.ResultsDir, env.PublicURL); err != nil {
			g.Store.Close()
			return nil, err
		}
	}
	if g.identity, err = g.openIdentity(ctx, servers); err != nil {
		g.Store.Close()
		return nil, err
	}
	if g.identity != nil {
		b.Identity = g.identity.svc
	}
	if b.Embedder == nil {
		ecfg, err := embed.ConfigFromEnv(o.Getenv)
		if err != nil {
			return nil, err
		}
		if b.Embedder, err = embed.New(ctx, ecfg); err != nil {
			return nil, err
		}
	}
	rcfg, err := rerank.ConfigFromEnv(o.Getenv)
	if err != nil {
		return nil, err
	}
	if b.Reranker, err = rerank.New(ctx, rcfg); err != nil {
		return nil, err
	}
	g.App, err = app.New(b, app.Options{Env: env, Getenv: o.Getenv, WhileLoading: app.ServeWhileLoading,
		StartupWait: o.StartupWait, ConsolePoll: min(max(env.HealthInterval, 2*time.Second), 30*time.Second), Logger: log})
	if err != nil {
		g.Store.Close()
		return nil, err
	}
	return g, nil
}

// Sync pulls every upstream's tools into the store, then applies the new
// catalog: one read of the store, the index rebuilt from it (mode: full,
// incremental or off), the keyword index and the MCP surface.
func (g *Runtime) Sync(ctx context.Context, mode indexer.Mode) (syncer.Report, error) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	out, err := syncer.Sync(ctx, syncer.Config{
		Upstreams: g.Upstreams, Store: g.Store, Parallel: g.Env.SyncParallel,
		Timeout: g.Env.SyncTimeout, Logger: g.log, MaxTools: g.Env.MaxTools,
	}, syncer.Hooks{
		// The servers are the registry files' (WatchConfig reloads them);
		// their prompts and resources are listed by Apply.
		Publish: func(ctx context.Context, rep syncer.Report) error {
			g.lastSync.Store(&rep)
			res, err := g.Apply(ctx, app.Change{Index: mode})
			if res.IndexErr != nil {
				g.log.Error("index build failed; retrieval falls back to keyword search", "error", res.IndexErr)
			}
			return err
		},
	})
	return out.Sync, err
}

// Reindex rebuilds the index from the store only (no upstream calls).
func (g *Runtime) Reindex(ctx context.Context, mode indexer.Mode) (indexer.BuildResult, error) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	res, err := g.Apply(ctx, app.Change{Index: mode, NoUpstreams: true})
	if err != nil {
		return res.Index, err
	}
	return res.Index, res.IndexErr
}

type reindexer struct{ g *Runtime }

func (r reindexer) Reindex(ctx context.Context, mode string) (any, error) {
	m, err := indexer.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	return r.g.Reindex(ctx, m)
}

// details are the local runtime's fields of GET /tool-rag/health.
func (g *Runtime) details(context.Context) map[string]any {
	out := map[string]any{"db_size_bytes": g.Store.SizeBytes()}
	if rep := g.lastSync.Load(); rep != nil {
		out["last_sync"] = rep
	}
	if l := g.live.Load(); l != nil {
		if d := l.Report(); len(d) > 0 {
			out["list_changes_damped"] = d
		}
	}
	return out
}

// Background starts the resync and health loops; they stop with ctx.
func (g *Runtime) Background(ctx context.Context) {
	g.followLists(ctx)
	if g.Env.HealthInterval > 0 {
		var wasDown []string
		go g.Health.Run(ctx, g.Upstreams, g.Env.HealthInterval, g.Env.HealthTimeout, func(down []string) {
			g.log.Info("upstream health changed", "down", down)
			// A server that answers again is synced at once: its tools
			// come back (or appear, after a setup) and the error of its
			// last failed sync is cleared, without waiting for a resync.
			if back := recovered(wasDown, down); len(back) > 0 {
				g.log.Info("upstream back up; syncing", "servers", back)
				go func() {
					if _, err := g.Sync(ctx, indexer.ModeIncremental); err != nil {
						g.log.Error("sync after a server came back failed", "error", err)
					}
				}()
			}
			wasDown = down
		})
	}
	if g.Env.ResyncInterval > 0 {
		go func() {
			t := time.NewTicker(g.Env.ResyncInterval)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					if _, err := g.Sync(ctx, indexer.ModeIncremental); err != nil {
						g.log.Error("background resync failed", "error", err)
					}
				}
			}
		}()
	}
}

// Close stops upstream processes and closes the store.
func (g *Runtime) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	flushErr := g.App.FlushCallSequences(ctx) // the counts not stored yet
	return errors.Join(flushErr, g.Upstreams.Close(), g.Store.Close(), g.identity.close())
}

// Listen opens the TCP listener the environment names (MCP_GATEWAY_HOST,
// MCP_GATEWAY_PORT), for Serve.
func (g *Runtime) Listen() (net.Listener, error) {
	addr := net.JoinHostPort(g.Env.Host, fmt.Sprint(g.Env.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w (set MCP_GATEWAY_PORT to use another port)", addr, err)
	}
	return ln, nil
}

// Serve serves on ln until ctx ends. It serves first and syncs in the
// background: a catalog stored by an earlier run is served (and callable)
// at once and replaced when the sync ends; with an empty catalog,
// find_tools and /tool-rag/retrieve wait for the first sync (up to
// Options.StartupWait), then answer that the catalog is still loading
// (app.ServeWhileLoading).
func (g *Runtime) Serve(ctx context.Context, ln net.Listener) error {
	mode, err := indexer.ParseMode(g.Env.StartupReindex)
	if err != nil {
		return err
	}
	if _, err := g.Apply(ctx, app.Change{Stored: true}); err != nil {
		return fmt.Errorf("read the stored catalog: %w", err)
	}
	if stored := g.Catalog.Len(); stored > 0 {
		g.log.Info("serving the stored catalog while the startup sync runs", "tools", stored)
	}
	srv := httpserve.New(g.Handler)
	g.log.Info("gateway listening", "addr", ln.Addr().String(), "mcp", g.Env.MCPPath, "servers", len(g.Upstreams.Servers()))
	go func() {
		rep, err := g.Sync(ctx, mode)
		if err != nil {
			g.log.Error("startup sync failed", "error", err)
		} else {
			g.log.Info("startup sync done", "servers", rep.Servers, "synced", rep.Synced, "stale", len(rep.Stale), "changed", rep.Changed, "took", rep.Duration.Round(time.Millisecond))
		}
		g.Background(ctx)
	}()
	go g.WatchConfig(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(httpserve.IdleUntilFirstByte(ln, srv.IdleTimeout)) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(shutdown)
}

// recovered returns the servers of before that are not in after (both
// sorted).
func recovered(before, after []string) []string {
	var out []string
	for _, id := range before {
		if i := sort.SearchStrings(after, id); i == len(after) || after[i] != id {
			out = append(out, id)
		}
	}
	return out
}
