package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/indexer"
	"github.com/toolrag/mcp-gateway/pkg/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/lambdalimits"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/ragapi"
	"github.com/toolrag/mcp-gateway/pkg/rerank"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"github.com/toolrag/mcp-gateway/pkg/usage"
)

// Gateway is the gateway function: an http.Handler serving the MCP
// endpoint (MCP_GATEWAY_MCP_PATH, default /mcp), /tool-rag/* and /health.
// Wrap it with Start (or HTTPAPIHandler, RESTHandler, FunctionURLHandler)
// in a Lambda, or serve it with net/http anywhere else.
//
// A Gateway keeps no state of its own that another instance needs: sessions
// live in the sessions table, keys in the keys table, the catalog in the
// tools table and the index in S3. Each instance checks for a newer index
// lazily, on the first request after IndexRefresh, because Lambda freezes
// the process between invocations.
type Gateway struct {
	Tools         *dynamo.ToolStore
	Keys          *dynamo.KeyStore
	Registry      *dynamo.RegistryStore
	Sessions      *dynamo.SessionStore
	Upstreams     *upstream.Manager
	Indexer       *indexer.Indexer
	Retriever     *retrieve.Retriever
	MCP           *gateway.Gateway
	Metrics       *metrics.Registry
	DynamoMetrics *dynamo.Metrics
	// Usage is this instance's per-key and per-server call statistics
	// (the console's usage page).
	Usage *usage.Recorder

	cfg     Config
	log     *slog.Logger
	handler http.Handler
	bucket  *watchedBucket
	catalog *snapshot
	down    atomic.Pointer[map[string]bool]
	// catalogSource says where the catalog copy came from: "s3" or "dynamodb".
	catalogSource atomic.Pointer[string]
	// copySHA and copyETag identify the catalog copy the catalog was read
	// from (under refreshMu).
	copySHA, copyETag string
	authC             auth.Counters
	processStart      time.Time   // when NewGateway started
	invoked           atomic.Bool // a request has reached afterLoad
	sessionIDs        *session.IDManager
	surfaces          *storedSurfaces  // upstream prompts/resources stored by the sync function
	emit              *emitter         // CloudWatch EMF lines; nil when off
	exact             *exactLimiter    // TOOL_RAG_RATE_LIMIT=exact; nil otherwise
	oauth             *oauth.Validator // nil without OAuth
	started           time.Time
	initTime          time.Duration
	cold              ColdStart // written before loaded is closed
	loaded            chan struct{}

	refreshMu sync.Mutex
	nextCheck atomic.Int64 // unix nanoseconds of the next lazy refresh
	refreshes atomic.Int64
	loadedGen int64
	catalogAt time.Time
	healthAt  time.Time
	indexErr  string // last index error logged (logged once); under refreshMu
	// indexErrShown is indexErr for /tool-rag/health.
	indexErrShown atomic.Pointer[string]
	noIndexSaid   bool
}

// ColdStart is where NewGateway spent its time.
type ColdStart struct {
	Init       time.Duration `json:"init_ns"`        // clients, stores, embedder, MCP server
	IndexFetch time.Duration `json:"index_fetch_ns"` // S3 GETs: pointer, meta, index blob
	IndexParse time.Duration `json:"index_parse_ns"` // SHA-256 check, decode, meta check
	IndexBytes int64         `json:"index_bytes"`    // bytes read from S3
	Catalog    time.Duration `json:"catalog_ns"`     // registry scan + catalog copy (or tools table scans)
	Keywords   time.Duration `json:"keywords_ns"`    // keyword index over the catalog (concurrent with Surface)
	Surface    time.Duration `json:"surface_ns"`     // MCP tool list and upstream prompts/resources (concurrent with Keywords)
	Total      time.Duration `json:"total_ns"`
}

// NewGateway builds the gateway and loads its state: the registry, the
// catalog and the published index (a missing or unreadable index is
// logged once and find_tools answers with the keyword fallback over the
// catalog until a good index is published).
func NewGateway(ctx context.Context, cfg Config) (*Gateway, error) {
	start := time.Now()
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	dm := &dynamo.Metrics{}
	if err := cfg.clients(ctx, dm, true); err != nil {
		return nil, err
	}
	if err := cfg.secretSource(ctx); err != nil {
		return nil, err
	}
	emb, err := cfg.embedder(ctx)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	g := &Gateway{cfg: cfg, log: log, Metrics: metrics.New(), DynamoMetrics: dm, Usage: usage.New(), started: time.Now().UTC(), loadedGen: -1, processStart: start}
	g.down.Store(&map[string]bool{})
	g.Tools = dynamo.NewToolStore(cfg.DynamoDB, cfg.Tables.Tools)
	g.Tools.Metrics = dm
	g.Keys = dynamo.NewKeyStore(cfg.DynamoDB, cfg.Tables.Keys)
	g.Keys.Metrics = dm
	g.Registry = dynamo.NewRegistryStore(cfg.DynamoDB, cfg.Tables.Registry)
	g.Registry.Metrics = dm
	g.Sessions = dynamo.NewSessionStore(cfg.DynamoDB, cfg.Tables.Sessions)
	g.catalog = &snapshot{store: g.Tools}
	g.surfaces = &storedSurfaces{}
	env := cfg.Env
	g.Upstreams = newManager(cfg)
	g.bucket = newWatchedBucket(s3bucket.New(cfg.S3, cfg.Bucket), cfg.Prefix)
	// With TOOL_RAG_REINDEX_INPLACE the gateway publishes too, with the
	// catalog copy written first, like the sync function.
	copies := &copier{tools: g.Tools, bucket: g.bucket, prefix: cfg.Prefix, log: log}
	g.Indexer, err = indexer.New(indexer.Config{Catalog: g.Tools, Embedder: emb, Bucket: g.bucket, Prefix: cfg.Prefix,
		BeforeSwitch: copies.beforeSwitch, Logger: log})
	if err != nil {
		return nil, err
	}
	rr, err := rerank.New(ctx, cfg.Rerank)
	if err != nil {
		return nil, err
	}
	g.Retriever, err = retrieve.New(retrieve.Config{
		Tools: g.catalog, Index: g.Indexer, Embedder: emb, Reranker: rr, ServerUp: g.serverUp, Logger: log,
	})
	if err != nil {
		return nil, err
	}
	g.MCP, err = gateway.New(gateway.Config{
		Version: Version, Catalog: g.catalog, Upstreams: lambdalimits.Upstreams{Manager: g.Upstreams}, Retriever: g.Retriever,
		Sessions: g.Sessions, MaxParallel: env.MaxParallel, ShortlistDescChars: env.ShortlistDescChars,
		UpstreamListTimeout: cfg.UpstreamListTimeout, Surfaces: g.surfaces, Logger: log, OnCall: g.Usage.ToolCall,
	})
	if err != nil {
		return nil, err
	}
	g.initTime = time.Since(start)
	g.registerMetrics()
	g.emit = newEmitter(g.Metrics, cfg.MetricsNamespace, cfg.MetricsInterval, cfg.metricsOut)

	limits := &sync.Map{}
	var keys auth.KeyLookup = auth.NewCached(keyLookup{keys: g.Keys, log: log, warned: &sync.Map{}, limits: limits}, cfg.KeyCacheTTL)
	exact := func(h http.Handler) http.Handler { return h }
	if cfg.RateLimit == RateLimitExact {
		g.exact = &exactLimiter{counter: dynamo.NewRateCounter(cfg.DynamoDB, cfg.Tables.Sessions), window: cfg.RateLimitWindow, limits: limits, log: log}
		exact = g.exact.middleware
	}
	if env.WithoutAuth {
		log.Warn("TOOL_RAG_WITHOUT_AUTH is set: every caller is granted every server")
	}
	resource, err := g.oauthResource(ctx)
	if err != nil {
		return nil, err
	}
	// Failed authentications are counted per source IP (the adapters set
	// RemoteAddr from the request context; X-Forwarded-For is never
	// trusted here), per instance.
	authCfg := auth.Config{Keys: keys, Disabled: env.WithoutAuth, Counters: &g.authC, OnRateLimited: g.Usage.RateLimitedRequest,
		Tokens: resource.Tokens(), Challenge: resource.Challenge(), FailureLimit: env.AuthFailureLimit()}
	con, err := g.newConsole()
	if err != nil {
		return nil, err
	}
	ids := session.NewIDManager(g.Sessions, env.SessionTTL)
	ids.Timeout = sessionStoreTimeout
	ids.OnError = func(err error) {
		log.Error("session store unavailable; the request is answered 503 with Retry-After", "error", err)
	}
	g.sessionIDs = ids
	api := ragapi.New(ragapi.Config{
		Retriever: g.Retriever, Tools: g.catalog, Reindexer: reindexer{g}, Metrics: g.Metrics, Health: g.healthFields,
		ServerUp:     g.serversUp,
		MaxBodyBytes: env.MaxBodyBytes,
	})
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", g.serveHealth)
	resource.Routes(mux)
	// Authentication does not need the catalog: a caller learns that the
	// gateway is still loading only after its key is accepted.
	mcpHandler := g.MCP.Handler(gateway.HTTPOptions{
		SessionIDs: ids, MaxBodyBytes: env.MaxBodyBytes,
		Options: []server.StreamableHTTPOption{
			server.WithSessionIdleTTL(sessionStateIdle),
		},
	})
	mux.Handle(env.MCPPath, auth.Middleware(authCfg, exact(g.afterLoad(observeTools(g.Metrics, ids.Guard(mcpHandler))))))
	mux.Handle("/tool-rag/", auth.Middleware(authCfg, exact(g.afterLoad(api.Handler()))))
	g.mountConsole(mux, con, authCfg)
	g.handler = mux

	// The first load runs on its own goroutine so that NewGateway can
	// return after InitWait while it goes on (see Config.InitWait).
	g.loaded = make(chan struct{})
	first := make(chan loadResult, 1)
	go func() {
		cold := ColdStart{Init: g.initTime}
		err := g.refresh(context.WithoutCancel(ctx), cfg.Now(), &cold)
		first <- loadResult{cold, err}
	}()
	var waitOver <-chan time.Time
	if cfg.InitWait > 0 {
		t := time.NewTimer(cfg.InitWait)
		defer t.Stop()
		waitOver = t.C
	}
	select {
	case res := <-first:
		if res.err != nil {
			g.Upstreams.Close()
			return nil, res.err
		}
		g.markLoaded(res.cold, start)
	case <-waitOver:
		log.Warn("the catalog and index are still loading; the function starts now and requests wait for the load",
			"waited", cfg.InitWait)
		go g.finishLoad(first, start)
	}
	return g, nil
}

type loadResult struct {
	cold ColdStart
	err  error
}

// markLoaded records the cold start and opens the gateway to requests.
func (g *Gateway) markLoaded(cold ColdStart, start time.Time) {
	cold.Total = time.Since(start)
	g.cold = cold
	close(g.loaded)
	g.log.Info("gateway ready", "tools", g.catalog.len(), "index", g.Indexer.Stats().ToolsInIndex,
		"servers", len(g.Upstreams.Servers()), "cold_start", cold.Total.Round(time.Millisecond))
}

// finishLoad waits for the first load NewGateway stopped waiting for, and
// repeats it until it succeeds (a Lambda process runs only while it is
// serving, so the retries happen while requests wait for them).
func (g *Gateway) finishLoad(first <-chan loadResult, start time.Time) {
	res := <-first
	cold, err := res.cold, res.err
	retry := g.cfg.loadRetry
	if retry <= 0 {
		retry = time.Second
	}
	for err != nil {
		g.log.Error("loading the catalog failed; retrying", "error", err, "in", retry)
		time.Sleep(retry)
		retry = min(2*retry, 30*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), loadAttemptTimeout)
		err = g.refresh(ctx, g.cfg.Now(), &cold)
		cancel()
	}
	g.markLoaded(cold, start)
}

// loadAttemptTimeout bounds one background retry of the first load.
const loadAttemptTimeout = 5 * time.Minute

// sessionStoreTimeout bounds one session-store call (the session id
// manager's calls have no request context); keyLookupTimeout bounds one
// key lookup. Both fail well inside the gateway's 29 s with a 503.
const (
	sessionStoreTimeout = 3 * time.Second
	keyLookupTimeout    = 3 * time.Second
)

// answerMargin is the time a request waiting for the first load keeps to
// answer 503 before its deadline.
const answerMargin = time.Second

// Loaded is closed when the gateway has loaded its catalog and index and
// serves requests without waiting.
func (g *Gateway) Loaded() <-chan struct{} { return g.loaded }

func (g *Gateway) isLoaded() bool {
	select {
	case <-g.loaded:
		return true
	default:
		return false
	}
}

// afterLoad makes requests wait for the first load, until answerMargin
// before their deadline (and, for the request that caused the cold start,
// before API Gateway's timeout counted from the process start); then they
// are answered 503 with Retry-After.
func (g *Gateway) afterLoad(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first := !g.invoked.Swap(true)
		if !g.isLoaded() {
			var giveUp <-chan time.Time
			front := g.cfg.frontTimeout
			if front == 0 {
				front = lambdalimits.FrontTimeout
			}
			if by := lambdalimits.AnswerBy(r.Context(), g.processStart, first, front, answerMargin); !by.IsZero() {
				t := time.NewTimer(time.Until(by))
				defer t.Stop()
				giveUp = t.C
			}
			select {
			case <-g.loaded:
			case <-r.Context().Done():
				return
			case <-giveUp:
				w.Header().Set("Content-Type", "application/json")
				w.Header().Set("Retry-After", "1")
				w.WriteHeader(http.StatusServiceUnavailable)
				_ = json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(
					"the gateway is still loading its tool catalog and index (started %s ago); retry shortly",
					time.Since(g.started).Round(100*time.Millisecond))})
				return
			}
		}
		h.ServeHTTP(w, r)
	})
}

// CatalogSource says where the in-memory catalog was last read from: "s3"
// (the catalog copy published with the index) or "dynamodb".
func (g *Gateway) CatalogSource() string {
	if p := g.catalogSource.Load(); p != nil {
		return *p
	}
	return ""
}

// ColdStart returns where the first load spent its time (only Init until
// Loaded is closed).
func (g *Gateway) ColdStart() ColdStart {
	if !g.isLoaded() {
		return ColdStart{Init: g.initTime}
	}
	return g.cold
}

// Close stops the upstream sessions.
func (g *Gateway) Close() error { return g.Upstreams.Close() }

// ServeHTTP implements http.Handler. When IndexRefresh has passed since the
// last check, the request first checks for a newer index (one conditional
// GET of the pointer) and, when one was published, re-reads the registry
// and the catalog; a concurrent request does not wait for that.
func (g *Gateway) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !g.isLoaded() {
		g.handler.ServeHTTP(w, r) // waits in afterLoad
		return
	}
	if now := g.cfg.Now(); now.UnixNano() >= g.nextCheck.Load() && g.refreshMu.TryLock() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 20*time.Second)
		if err := g.refreshLocked(ctx, now, nil); err != nil {
			g.log.Error("refresh failed; serving the previous catalog and index", "error", err)
		}
		cancel()
		g.refreshMu.Unlock()
	}
	g.handler.ServeHTTP(w, r)
	g.emit.maybe(time.Now())
}

// Refresh checks for a newer index and catalog now, regardless of
// IndexRefresh.
func (g *Gateway) Refresh(ctx context.Context) error {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	return g.refreshLocked(ctx, g.cfg.Now(), nil)
}

func (g *Gateway) refresh(ctx context.Context, now time.Time, cold *ColdStart) error {
	g.refreshMu.Lock()
	defer g.refreshMu.Unlock()
	return g.refreshLocked(ctx, now, cold)
}

// refreshLocked loads a newer index, re-reads the registry and the catalog
// when something was published (or the copy is old), and the health column
// when it is older than HealthCacheTTL. Only catalog errors are returned:
// an unreadable index leaves the keyword fallback in charge.
func (g *Gateway) refreshLocked(ctx context.Context, now time.Time, cold *ColdStart) error {
	g.refreshes.Add(1)
	fetch0, bytes0, t0 := g.bucket.getNanos.Load(), g.bucket.getBytes.Load(), time.Now()
	_, err := g.Indexer.Refresh(ctx)
	if cold != nil {
		cold.IndexFetch = time.Duration(g.bucket.getNanos.Load() - fetch0)
		cold.IndexParse = max(0, time.Since(t0)-cold.IndexFetch)
		cold.IndexBytes = g.bucket.getBytes.Load() - bytes0
	}
	g.noteIndex(err)

	if gen := g.bucket.generation(); gen != g.loadedGen || now.Sub(g.catalogAt) >= g.cfg.CatalogMaxAge {
		t1 := time.Now()
		changed, err := g.reloadCatalog(ctx)
		if err != nil {
			g.nextCheck.Store(now.Add(g.cfg.IndexRefresh).UnixNano())
			return err
		}
		if changed {
			// The keyword index and the MCP surface (tool list, upstream
			// prompts and resources) are built from the same copy, at once.
			t2 := time.Now()
			var (
				wg               sync.WaitGroup
				kwErr            error
				kwTime, surfTime time.Duration
			)
			wg.Add(1)
			go func() {
				defer wg.Done()
				kwErr = g.Retriever.Sync(ctx)
				kwTime = time.Since(t2)
			}()
			err := g.MCP.Reload(ctx)
			surfTime = time.Since(t2)
			wg.Wait()
			if err = errors.Join(kwErr, err); err != nil {
				return err
			}
			if cold != nil {
				cold.Catalog, cold.Keywords, cold.Surface = t2.Sub(t1), kwTime, surfTime
			}
		}
		g.loadedGen, g.catalogAt = gen, now
	}
	if now.Sub(g.healthAt) >= g.cfg.HealthCacheTTL {
		if err := g.reloadHealth(ctx); err != nil {
			g.log.Warn("could not read upstream health; keeping the previous view", "error", err)
		} else {
			g.healthAt = now
		}
	}
	g.nextCheck.Store(now.Add(g.cfg.IndexRefresh).UnixNano())
	return nil
}

// noteIndex logs the index state once per change: an unreadable index, a
// missing one, or a recovery.
func (g *Gateway) noteIndex(err error) {
	where := fmt.Sprintf("s3://%s/%s%s", g.cfg.Bucket, g.cfg.Prefix, indexpub.PointerKey)
	_, _, ok := g.Indexer.Current()
	switch {
	case err != nil:
		if msg := err.Error(); msg != g.indexErr {
			g.indexErr = msg
			if ok {
				g.log.Error("the published vector index cannot be used; the current one stays in use", "pointer", where, "error", err)
			} else {
				g.log.Error("the published vector index cannot be used; find_tools answers with the keyword fallback (fallback_used=true) until a good index is published", "pointer", where, "error", err)
			}
		}
	case !ok:
		if !g.noIndexSaid {
			g.noIndexSaid = true
			g.log.Warn("no vector index is published yet; find_tools answers with the keyword fallback (fallback_used=true) until the sync function publishes one", "pointer", where)
		}
	default:
		if g.indexErr != "" || g.noIndexSaid {
			st := g.Indexer.Stats()
			g.log.Info("vector index loaded; semantic retrieval is back", "tools", st.ToolsInIndex, "model", st.ModelID)
		}
		g.indexErr, g.noIndexSaid = "", false
	}
	shown := g.indexErr
	g.indexErrShown.Store(&shown)
}

// reloadCatalog re-reads the registry (upstream URLs) and the catalog:
// from the catalog copy of the loaded index when there is one, otherwise
// from the tools table. The copy is read with a conditional GET when it is
// what the catalog came from: changed is false when it is the same.
func (g *Gateway) reloadCatalog(ctx context.Context) (changed bool, err error) {
	servers, err := loadServers(ctx, g.Registry, g.cfg.secret, g.log)
	if err != nil {
		return false, fmt.Errorf("read the upstream registry: %w", err)
	}
	g.Upstreams.SetServers(servers)
	surfChanged, err := g.surfaces.load(ctx, g.Registry, g.log)
	if err != nil {
		return false, err
	}
	if _, meta, ok := g.Indexer.Current(); ok && meta.IndexSHA256 != "" {
		ifNoneMatch := ""
		if g.CatalogSource() == "s3" && g.copySHA == meta.IndexSHA256 {
			ifNoneMatch = g.copyETag
		}
		c, etag, ok, err := readCatalogCopy(ctx, g.bucket, g.cfg.Prefix, meta.IndexSHA256, ifNoneMatch)
		switch {
		case errors.Is(err, indexpub.ErrNotModified):
			return surfChanged, nil
		case ok:
			g.catalog.set(c.Tools, c.Servers)
			g.copySHA, g.copyETag = meta.IndexSHA256, etag
			g.setCatalogSource("s3")
			return true, nil
		case err != nil && !errors.Is(err, indexpub.ErrNotExist):
			g.log.Warn("catalog copy unusable; reading the tools table instead", "error", err)
		}
	}
	if err := g.catalog.load(ctx); err != nil {
		return false, fmt.Errorf("read the tool catalog: %w", err)
	}
	g.copySHA, g.copyETag = "", ""
	g.setCatalogSource("dynamodb")
	return true, nil
}

func (g *Gateway) setCatalogSource(s string) { g.catalogSource.Store(&s) }

func (g *Gateway) reloadHealth(ctx context.Context) error {
	h, err := g.Registry.Health(ctx)
	if err != nil {
		return err
	}
	down := map[string]bool{}
	for id, st := range h {
		if st.Status == dynamo.HealthDown {
			down[id] = true
		}
	}
	g.down.Store(&down)
	return nil
}

// serverUp reports the registry's last probe result; servers never probed
// count as up.
func (g *Gateway) serverUp(id string) bool { return !(*g.down.Load())[id] }

func (g *Gateway) downServers() []string {
	var out []string
	for id := range *g.down.Load() {
		out = append(out, id)
	}
	return out
}

func (g *Gateway) serveHealth(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	if !g.isLoaded() {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusServiceUnavailable)
		_ = json.NewEncoder(w).Encode(map[string]any{"status": "loading", "version": Version, "started_at": g.started})
		return
	}
	st := g.Indexer.Stats()
	_ = json.NewEncoder(w).Encode(map[string]any{
		"status": "ok", "version": Version, "started_at": g.started,
		"index_size": st.ToolsInIndex, "catalog_size": g.catalog.len(), "fallback": st.ToolsInIndex == 0,
	})
}

// serversUp reports each configured server and whether it is up.
func (g *Gateway) serversUp() map[string]bool {
	out := map[string]bool{}
	for _, id := range g.Upstreams.Servers() {
		out[id] = g.serverUp(id)
	}
	return out
}

func (g *Gateway) healthFields(ctx context.Context) map[string]any {
	st := g.Indexer.Stats()
	out := map[string]any{
		"runtime": "aws-lambda", "version": Version, "started_at": g.started,
		"index_size": st.ToolsInIndex, "catalog_size": g.catalog.len(), "catalog_source": g.CatalogSource(), "index": st,
		"servers_down": g.downServers(), "cold_start": g.ColdStart(), "refreshes": g.refreshes.Load(),
		"dynamodb": g.DynamoMetrics.Snapshot(),
	}
	if p, ok := g.indexPointer(); ok {
		out["index_pointer"] = p
	}
	if e := g.indexErrShown.Load(); e != nil && *e != "" {
		out["index_error"] = *e
	}
	return out
}

func (g *Gateway) indexPointer() (vindexInfo, bool) {
	_, meta, ok := g.Indexer.Current()
	if !ok {
		return vindexInfo{}, false
	}
	return vindexInfo{SHA256: meta.IndexSHA256, BuiltAt: meta.BuiltAt, ModelID: meta.ModelID, Count: meta.Count}, true
}

type vindexInfo struct {
	SHA256  string    `json:"sha256"`
	BuiltAt time.Time `json:"built_at"`
	ModelID string    `json:"model_id"`
	Count   int       `json:"count"`
}

func (g *Gateway) registerMetrics() {
	m := g.Metrics
	m.Gauge("tools_in_index", func() float64 { return float64(g.Indexer.Stats().ToolsInIndex) })
	m.Gauge("tools_in_db", func() float64 { return float64(g.catalog.len()) })
	m.Gauge("active_servers", func() float64 {
		n := 0
		for _, id := range g.Upstreams.Servers() {
			if g.serverUp(id) {
				n++
			}
		}
		return float64(n)
	})
	m.Gauge("index_age_seconds", func() float64 {
		if _, meta, ok := g.Indexer.Current(); ok && !meta.BuiltAt.IsZero() {
			return time.Since(meta.BuiltAt).Seconds()
		}
		return 0
	})
	m.CounterFunc("auth_failures_total", g.authC.Failures.Load)
	m.CounterFunc("auth_rate_limited_total", g.authC.RateLimited.Load)
	m.CounterFunc("auth_failures_throttled_total", g.authC.FailureThrottled.Load)
	m.CounterFunc("auth_lookup_errors_total", g.authC.LookupErrors.Load)
	m.CounterFunc("mcp_tool_calls_total", g.MCP.Metrics.Calls.Load)
	m.CounterFunc("mcp_tool_call_errors_total", g.MCP.Metrics.CallErrors.Load)
	m.CounterFunc("mcp_calls_rejected_total", g.MCP.Metrics.CallsRejected.Load)
	m.CounterFunc("mcp_find_tools_total", g.MCP.Metrics.Finds.Load)
	m.CounterFunc("http_rejected_total", g.MCP.Metrics.Rejected.Load)
	m.CounterFunc("index_refresh_checks_total", g.refreshes.Load)
	dm := g.DynamoMetrics
	m.CounterFunc("dynamodb_retries_total", dm.Retries.Load)
	m.CounterFunc("dynamodb_throttles_total", dm.Throttles.Load)
	m.CounterFunc("dynamodb_conflicts_total", dm.Conflicts.Load)
	m.CounterFunc("rate_limited_exact_total", func() int64 {
		if g.exact == nil {
			return 0
		}
		return g.exact.limited.Load()
	})
	m.CounterFunc("rate_limit_store_errors_total", func() int64 {
		if g.exact == nil {
			return 0
		}
		return g.exact.storeErrors.Load()
	})
	m.CounterFunc("session_store_errors_total", func() int64 {
		if g.sessionIDs == nil {
			return 0
		}
		return g.sessionIDs.StoreErrors()
	})
}

// keyLookup adapts the keys table to auth.KeyLookup.
type keyLookup struct {
	keys   *dynamo.KeyStore
	log    *slog.Logger
	warned *sync.Map // key id → true once its changed grants were logged
	limits *sync.Map // key id → rate limit, for the exact rate limit
}

func (k keyLookup) LookupKey(ctx context.Context, secretHash string) (policy.Key, error) {
	ctx, cancel := context.WithTimeout(ctx, keyLookupTimeout)
	defer cancel()
	key, err := k.keys.Lookup(ctx, secretHash)
	switch {
	case err == nil:
		if k.limits != nil {
			k.limits.Store(key.ID, key.RateLimit)
		}
		if _, done := k.warned.LoadOrStore(key.ID, true); !done && k.log != nil {
			for _, line := range policy.ChangedMeaning(key) {
				k.log.Warn("key grant changed meaning: "+line, "key", key.ID)
			}
		}
		return key, nil
	case errors.Is(err, catalog.ErrNotFound):
		return policy.Key{}, auth.ErrUnknownKey
	case errors.Is(err, dynamo.ErrKeyDisabled):
		return key, fmt.Errorf("API key %q: %w", key.ID, auth.ErrDisabledKey)
	}
	if k.log != nil {
		k.log.Error("key store unavailable; the request is answered 503 with Retry-After", "error", err)
	}
	return policy.Key{}, err
}

// reindexer serves POST /tool-rag/reindex: it starts the sync function
// asynchronously, or rebuilds in place when TOOL_RAG_REINDEX_INPLACE=1.
type reindexer struct{ g *Gateway }

// ReindexStatus is the "status" of a reindex response.
type ReindexStatus struct {
	// How is "async" (the sync function was invoked) or "in_place".
	How        string `json:"how"`
	Function   string `json:"function,omitempty"`
	StatusCode int32  `json:"invoke_status_code,omitempty"`
	Note       string `json:"note,omitempty"`
	// In-place results.
	Mode       string `json:"mode,omitempty"`
	Tools      int    `json:"tools,omitempty"`
	Embedded   int    `json:"embedded,omitempty"`
	Reused     int    `json:"reused,omitempty"`
	DurationMS int64  `json:"duration_ms,omitempty"`
}

func (r reindexer) Reindex(ctx context.Context, mode string) (any, error) {
	g := r.g
	m, err := indexer.ParseMode(mode)
	if err != nil {
		return nil, err
	}
	if g.cfg.ReindexInPlace {
		// The catalog may have changed since the last sync of this
		// instance's copy: the indexer reads the tools table itself.
		res, err := g.Indexer.Build(ctx, m)
		if err != nil {
			return nil, err
		}
		if err := g.Refresh(ctx); err != nil {
			return nil, err
		}
		return ReindexStatus{How: "in_place", Mode: string(res.Mode), Tools: res.Tools, Embedded: res.Embedded,
			Reused: res.Reused, DurationMS: res.Duration.Milliseconds()}, nil
	}
	if g.cfg.SyncFunction == "" || g.cfg.Lambda == nil {
		return nil, errors.New("reindex needs TOOL_RAG_SYNC_FUNCTION (the sync function to invoke) or TOOL_RAG_REINDEX_INPLACE=1")
	}
	payload, _ := json.Marshal(SyncEvent{Mode: mode, Source: "tool-rag/reindex"})
	out, err := g.cfg.Lambda.Invoke(ctx, &lambda.InvokeInput{
		FunctionName:   aws.String(g.cfg.SyncFunction),
		InvocationType: lambdatypes.InvocationTypeEvent,
		Payload:        payload,
	})
	if err != nil {
		return nil, fmt.Errorf("invoke the sync function %q: %w", g.cfg.SyncFunction, err)
	}
	return ReindexStatus{How: "async", Function: g.cfg.SyncFunction, StatusCode: out.StatusCode,
		Note: fmt.Sprintf("the sync function re-reads every upstream and publishes a new index; gateways pick it up within %s", g.cfg.IndexRefresh)}, nil
}
