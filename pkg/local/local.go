// Package local runs the gateway as one process: YAML configuration, the
// SQLite catalog and an index directory on disk, stdio upstreams as pooled
// subprocesses, the offline embedder, and background resync and health
// loops. `toolrag serve` is a thin wrapper around Run.
package local

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/toolrag/mcp-gateway/internal/redact"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/indexer"
	"github.com/toolrag/mcp-gateway/pkg/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/planner"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/ragapi"
	"github.com/toolrag/mcp-gateway/pkg/rerank"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/store"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"github.com/toolrag/mcp-gateway/pkg/usage"
)

// Version is reported in initialize and /health.
var Version = "dev"

// Gateway is a running local gateway.
type Gateway struct {
	Env       config.Env
	Upstreams *upstream.Manager
	Store     *store.SQLite
	Indexer   *indexer.Indexer
	Retriever *retrieve.Retriever
	MCP       *gateway.Gateway
	Health    *health.Tracker
	Metrics   *metrics.Registry
	Usage     *usage.Recorder // per-key and per-server call statistics (the console's)
	Handler   http.Handler
	log       *slog.Logger

	ready atomic.Bool
	// firstSync is closed when the first sync of a gateway that started
	// with an empty catalog ends (nil: nothing to wait for).
	firstSync   atomic.Pointer[chan struct{}]
	startupWait time.Duration
	syncMu      sync.Mutex
	lastSync    atomic.Pointer[syncer.Report]
	// catalog counts for /metrics, refreshed after every sync (not per scrape)
	toolsInDB, staleInDB atomic.Int64
	authC                auth.Counters
	started              time.Time
	// configuration reloads (reload.go)
	keySet       *auth.KeySet
	reloadedKeys atomic.Pointer[[]policy.Key] // the keys of the last reload, for the console
	getenv       func(string) string
	cfgMu        sync.Mutex
	cfgFiles     configFiles
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
func New(ctx context.Context, o Options) (*Gateway, error) {
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
		if err := checkKeyGrants(env.KeysPath, list, servers, log); err != nil {
			return nil, err
		}
		keySet = auth.NewKeySet(list) // replaced when keys.yaml changes (WatchConfig)
		keys, keyList = keySet, list
	}
	resource, err := oauthResource(ctx, env, o.Getenv, keyList, log)
	if err != nil {
		return nil, err
	}

	g := &Gateway{Env: env, log: log, Health: health.NewTracker(), Metrics: metrics.New(), Usage: usage.New(), started: time.Now().UTC(),
		startupWait: o.StartupWait, keySet: keySet, getenv: o.Getenv}
	g.snapshotConfig()
	if g.startupWait <= 0 {
		g.startupWait = defaultStartupWait
	}
	g.Upstreams = upstream.NewManager(upstream.Options{
		CallTimeout: env.CallTimeout, ConnectTimeout: env.ConnectTimeout, IdleTimeout: env.IdleTimeout,
		StdioPoolSize: env.StdioPoolSize, MaxResultBytes: env.MaxResultBytes, Logger: log,
		MaxListTools: env.MaxTools, MaxListPages: env.MaxToolPages,
	})
	g.Upstreams.SetServers(servers)

	if dir := filepath.Dir(env.DBPath); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create %s: %w", dir, err)
		}
	}
	g.Store, err = store.OpenSQLite(ctx, env.DBPath)
	if err != nil {
		return nil, err
	}

	emb := o.Embedder
	if emb == nil {
		ecfg, err := embed.ConfigFromEnv(o.Getenv)
		if err != nil {
			return nil, err
		}
		if emb, err = embed.New(ctx, ecfg); err != nil {
			return nil, err
		}
	}
	g.Indexer, err = indexer.New(indexer.Config{
		Catalog: g.Store, Embedder: emb, Logger: log,
		Bucket: indexpub.NewDirBucket(env.IndexDir),
	})
	if err != nil {
		return nil, err
	}
	rr, err := rerankerFromEnv(ctx, o.Getenv)
	if err != nil {
		return nil, err
	}
	g.Retriever, err = retrieve.New(retrieve.Config{
		Tools: g.Store, Index: g.Indexer, Embedder: emb, Reranker: rr,
		ServerUp: g.Health.Up, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	pl, err := plannerFromEnv(o.Getenv)
	if err != nil {
		return nil, err
	}
	sessions := session.NewMemory()
	unprefixed := map[string]bool{}
	for id, s := range servers {
		if s.Unprefixed {
			unprefixed[id] = true
		}
	}
	g.MCP, err = gateway.New(gateway.Config{
		Unprefixed: unprefixed,
		Version:    Version, Catalog: g.Store, Upstreams: g.Upstreams, Retriever: startupRetriever{g},
		Sessions: sessions, Planner: pl, MaxParallel: env.MaxParallel,
		ShortlistDescChars: env.ShortlistDescChars, Logger: log, OnCall: g.Usage.ToolCall,
	})
	if err != nil {
		return nil, err
	}
	g.registerMetrics()

	api := ragapi.New(ragapi.Config{
		Retriever: startupRetriever{g}, Tools: g.Store, Reindexer: reindexer{g}, Metrics: g.Metrics,
		Health: g.healthFields, ServerUp: g.serversUp, MaxBodyBytes: env.MaxBodyBytes,
	})
	authCfg := auth.Config{Keys: keys, Disabled: env.WithoutAuth, Counters: &g.authC, OnRateLimited: g.Usage.RateLimitedRequest,
		Tokens: resource.Tokens(), Challenge: resource.Challenge(),
		FailureLimit: env.AuthFailureLimit(), TrustForwardedFor: env.TrustForwardedFor}
	con, err := g.newConsole(servers, keyList)
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	resource.Routes(mux)
	mux.HandleFunc("GET /health", g.serveHealth)
	mux.Handle(env.MCPPath, auth.Middleware(authCfg, g.MCP.Handler(gateway.HTTPOptions{
		SessionIDs:   session.NewIDManager(sessions, env.SessionTTL),
		MaxBodyBytes: env.MaxBodyBytes,
		Observe:      newRequestMetrics(g.Metrics).observe,
	})))
	mux.Handle("/tool-rag/", auth.Middleware(authCfg, api.Handler()))
	mountConsole(mux, con, authCfg)
	g.Handler = mux
	return g, nil
}

// Sync pulls every upstream's tools into the store, rebuilds the index
// (mode: full, incremental or off) and reloads the MCP surface.
func (g *Gateway) Sync(ctx context.Context, mode indexer.Mode) (syncer.Report, error) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	rep, err := syncer.Run(ctx, syncer.Config{
		Upstreams: g.Upstreams, Store: g.Store, Parallel: g.Env.SyncParallel,
		Timeout: g.Env.SyncTimeout, Logger: g.log, MaxTools: g.Env.MaxTools,
	})
	if err != nil {
		return rep, err
	}
	g.lastSync.Store(&rep)
	if err := g.Retriever.Sync(ctx); err != nil {
		return rep, err
	}
	if _, err := g.Indexer.Build(ctx, mode); err != nil {
		g.log.Error("index build failed; retrieval falls back to keyword search", "error", err)
	}
	if err := g.MCP.Reload(ctx); err != nil {
		return rep, err
	}
	g.countCatalog()
	g.ready.Store(true)
	return rep, nil
}

// countCatalog records the loaded catalog's counts for /metrics (read
// after every load, not per scrape) and returns the number of tools.
func (g *Gateway) countCatalog() int {
	tools, stale := g.MCP.CatalogCounts()
	g.toolsInDB.Store(int64(tools))
	g.staleInDB.Store(int64(stale))
	return tools
}

// Reindex rebuilds the index from the store only (no upstream calls).
func (g *Gateway) Reindex(ctx context.Context, mode indexer.Mode) (indexer.BuildResult, error) {
	g.syncMu.Lock()
	defer g.syncMu.Unlock()
	if err := g.Retriever.Sync(ctx); err != nil {
		return indexer.BuildResult{}, err
	}
	return g.Indexer.Build(ctx, mode)
}

type reindexer struct{ g *Gateway }

func (r reindexer) Reindex(ctx context.Context, mode string) (any, error) {
	m, err := indexer.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	return r.g.Reindex(ctx, m)
}

// Background starts the resync and health loops; they stop with ctx.
func (g *Gateway) Background(ctx context.Context) {
	if g.Env.HealthInterval > 0 {
		go g.Health.Run(ctx, g.Upstreams, g.Env.HealthInterval, g.Env.HealthTimeout, func(down []string) {
			g.log.Info("upstream health changed", "down", down)
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
func (g *Gateway) Close() error {
	return errors.Join(g.Upstreams.Close(), g.Store.Close())
}

// Run starts the gateway and serves until ctx ends (see Serve).
func Run(ctx context.Context, o Options) error {
	g, err := New(ctx, o)
	if err != nil {
		return err
	}
	defer g.Close()
	if err := g.CheckExposure(); err != nil {
		return err
	}
	addr := net.JoinHostPort(g.Env.Host, fmt.Sprint(g.Env.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w (set MCP_GATEWAY_PORT to use another port)", addr, err)
	}
	return g.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends. It serves first and syncs in the
// background: a catalog stored by an earlier run is served (and callable)
// at once and replaced when the sync ends; with an empty catalog,
// find_tools and /tool-rag/retrieve wait for the first sync (up to
// Options.StartupWait), then answer that the catalog is still loading.
func (g *Gateway) Serve(ctx context.Context, ln net.Listener) error {
	mode, err := indexer.ParseMode(g.Env.StartupReindex)
	if err != nil {
		return err
	}
	if err := g.MCP.ReloadTools(ctx); err != nil {
		return fmt.Errorf("read the stored catalog: %w", err)
	}
	stored := g.countCatalog()
	var first chan struct{} // closed when the first sync of an empty catalog ends
	if stored > 0 {
		g.log.Info("serving the stored catalog while the startup sync runs", "tools", stored)
	} else {
		first = make(chan struct{})
		g.firstSync.Store(&first)
	}
	srv := httpserve.New(g.Handler)
	g.log.Info("gateway listening", "addr", ln.Addr().String(), "mcp", g.Env.MCPPath, "servers", len(g.Upstreams.Servers()))
	go func() {
		rep, err := g.Sync(ctx, mode)
		if first != nil {
			close(first)
		}
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

func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": "ok", "ready": g.ready.Load(), "version": Version, "started_at": g.started,
	})
}

// serversUp reports each configured server and whether it is up.
func (g *Gateway) serversUp() map[string]bool {
	out := map[string]bool{}
	for _, id := range g.Upstreams.Servers() {
		out[id] = g.Health.Up(id)
	}
	return out
}

func (g *Gateway) healthFields(ctx context.Context) map[string]any {
	st := g.Indexer.Stats()
	out := map[string]any{
		"ready": g.ready.Load(), "index_size": st.ToolsInIndex, "db_size_bytes": g.Store.SizeBytes(),
		"started_at": g.started, "index": st, "servers_down": g.Health.Down(),
	}
	if rep := g.lastSync.Load(); rep != nil {
		out["last_sync"] = rep
	}
	return out
}

func (g *Gateway) registerMetrics() {
	m := g.Metrics
	m.Gauge("tools_in_index", func() float64 { return float64(g.Indexer.Stats().ToolsInIndex) })
	m.Gauge("tools_in_db", func() float64 { return float64(g.toolsInDB.Load()) })
	m.Gauge("stale_entries", func() float64 { return float64(g.staleInDB.Load()) })
	m.Gauge("active_servers", func() float64 {
		n := 0
		for _, id := range g.Upstreams.Servers() {
			if g.Health.Up(id) {
				n++
			}
		}
		return float64(n)
	})
	m.CounterFunc("auth_failures_total", g.authC.Failures.Load)
	m.CounterFunc("auth_rate_limited_total", g.authC.RateLimited.Load)
	m.CounterFunc("auth_failures_throttled_total", g.authC.FailureThrottled.Load)
	m.CounterFunc("mcp_tool_calls_total", g.MCP.Metrics.Calls.Load)
	m.CounterFunc("mcp_tool_call_errors_total", g.MCP.Metrics.CallErrors.Load)
	m.CounterFunc("mcp_calls_rejected_total", g.MCP.Metrics.CallsRejected.Load)
	m.CounterFunc("mcp_find_tools_total", g.MCP.Metrics.Finds.Load)
	m.CounterFunc("http_rejected_total", g.MCP.Metrics.Rejected.Load)
}

func rerankerFromEnv(ctx context.Context, getenv func(string) string) (retrieve.Reranker, error) {
	cfg, err := rerank.ConfigFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	return rerank.New(ctx, cfg)
}

func plannerFromEnv(getenv func(string) string) (gateway.Planner, error) {
	cfg, err := planner.ConfigFromEnv(getenv)
	if err != nil || !cfg.Enabled {
		return nil, err
	}
	p, err := planner.New(cfg)
	if err != nil {
		return nil, err
	}
	return PlannerAdapter{p}, nil
}

// PlannerAdapter lets a *planner.Planner serve the gateway's plan tool.
type PlannerAdapter struct{ P *planner.Planner }

// Plan implements gateway.Planner.
func (a PlannerAdapter) Plan(ctx context.Context, query string, cands []gateway.PlanCandidate) (json.RawMessage, error) {
	in := make([]planner.Candidate, len(cands))
	for i, c := range cands {
		in[i] = planner.Candidate{CallName: c.CallName, Description: c.Description, InputSchema: c.InputSchema, ToolType: c.ToolType}
	}
	plan, err := a.P.Plan(ctx, query, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(plan)
}
