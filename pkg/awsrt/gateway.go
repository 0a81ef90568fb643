package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3results"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/rerank"
	"github.com/toolrag/mcp-gateway/pkg/resultstore"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// GatewayFunction is the gateway function: the assembled app (pkg/app) over
// DynamoDB and S3, an http.Handler serving the MCP endpoint
// (MCP_GATEWAY_MCP_PATH, default /mcp), /tool-rag/* and /health. Wrap it
// with Start (or HTTPAPIHandler, RESTHandler, FunctionURLHandler) in a
// Lambda, or serve it with net/http anywhere else.
//
// A GatewayFunction keeps no state of its own that another instance needs: sessions
// live in the sessions table, keys in the keys table, the catalog in the
// tools table and the index in S3. Each instance checks for a newer index
// lazily, on the first request after IndexRefresh, because Lambda freezes
// the process between invocations.
type GatewayFunction struct {
	*app.App
	Tools         *dynamo.ToolStore
	Keys          *dynamo.KeyStore
	Registry      *dynamo.RegistryStore
	Sessions      *dynamo.SessionStore
	Upstreams     *upstream.Manager
	DynamoMetrics *dynamo.Metrics
	// Vault holds the sealed per-principal upstream grants
	// (docs/upstream-auth.md).
	Vault *dynamo.VaultRows

	cfg    Config
	log    *slog.Logger
	bucket *timedBucket
	health *health.Tracker
	oauth  *oauth.Validator // nil without OAuth
	// surfaces are the upstream prompts/resources stored by the sync
	// function; emit writes CloudWatch EMF lines (nil: off); exact is
	// TOOL_RAG_RATE_LIMIT=exact (nil otherwise).
	surfaces *syncer.StoredSurfaces
	emit     *metrics.Emitter
	exact    *auth.Exact
	// follow keeps the app on the index the sync function publishes;
	// served is the app's handler behind it.
	follow *app.Follower
	served http.Handler
	// copies reads the catalog copy published with the index (and, at
	// the cold start, its keyword analysis, during the index load).
	copies *indexpub.CopyReader[*retrieve.KeywordTerms]
	// catalogSource says where the catalog copy came from: "s3" or "dynamodb".
	catalogSource atomic.Pointer[string]
}

// ColdStart is where NewGatewayFunction spent its time.
type ColdStart = app.ColdStart

// ErrWithoutAuthOnLambda refuses TOOL_RAG_WITHOUT_AUTH=1 on Lambda: the
// function is reached through API Gateway or a function URL, never on
// loopback only, so every caller on the internet would be an anonymous
// admin.
var ErrWithoutAuthOnLambda = errors.New("TOOL_RAG_WITHOUT_AUTH=1 is refused on AWS Lambda: the function is reachable from the internet and every caller would be an anonymous admin; create an API key (toolrag keys create) or configure OAuth instead")

// StateKeySecret names the secret that seals the gateway's input_required
// state (Config.StateKey).
const StateKeySecret = "TOOL_RAG_STATE_KEY"

// stateKey reads StateKeySecret: from the environment, then the secrets
// store. Without it each instance seals with a key of its own, and a
// 2026-07-28 client's retry after input_required is accepted only by the
// instance that asked: that is logged.
func stateKey(ctx context.Context, cfg Config, log *slog.Logger) []byte {
	v := os.Getenv(StateKeySecret)
	if v == "" && cfg.secret != nil {
		v, _ = cfg.secret(ctx, StateKeySecret)
	}
	if v == "" {
		log.Warn("no " + StateKeySecret + " secret: a 2026-07-28 client's retry after an input_required answer is accepted only by the instance that answered; set the secret (32 random bytes or more) for every instance")
		return nil
	}
	return []byte(v)
}

// NewGatewayFunction builds the gateway and loads its state: the registry, the
// catalog and the published index (a missing or unreadable index is
// logged once and find_tools answers with the keyword fallback over the
// catalog until a good index is published).
func NewGatewayFunction(ctx context.Context, cfg Config) (*GatewayFunction, error) {
	if cfg.Env.WithoutAuth {
		return nil, ErrWithoutAuthOnLambda
	}
	start := time.Now()
	dm := &dynamo.Metrics{}
	cfg, emb, err := cfg.prepare(ctx, dm, true)
	if err != nil {
		return nil, err
	}
	rr, err := rerank.New(ctx, cfg.Rerank)
	if err != nil {
		return nil, err
	}
	log := cfg.Logger
	g := &GatewayFunction{cfg: cfg, log: log, DynamoMetrics: dm, health: health.NewTracker(),
		surfaces: &syncer.StoredSurfaces{}}
	g.Tools = dynamo.NewToolStore(cfg.DynamoDB, cfg.Tables.Tools)
	g.Tools.Metrics = dm
	g.Keys = dynamo.NewKeyStore(cfg.DynamoDB, cfg.Tables.Keys)
	g.Keys.Metrics, g.Keys.Log = dm, log
	g.Registry = dynamo.NewRegistryStore(cfg.DynamoDB, cfg.Tables.Registry)
	g.Registry.Metrics = dm
	g.Sessions = dynamo.NewSessionStore(cfg.DynamoDB, cfg.Tables.Sessions)
	g.Upstreams = upstream.NewManager(cfg.Env.UpstreamOptions(log))
	g.bucket = &timedBucket{Bucket: s3bucket.New(cfg.S3, cfg.Bucket)}
	resource, err := g.oauthResource(ctx)
	if err != nil {
		return nil, err
	}
	// With TOOL_RAG_REINDEX_INPLACE the gateway publishes too, with the
	// catalog copy written first, like the sync function.
	copies := &indexpub.CatalogWriter{Tools: g.Tools, Bucket: g.bucket, Prefix: cfg.Prefix, Log: log}
	// Each key lookup is bounded by keyLookupTimeout, a store failure is
	// logged, and (exact rate limits) each key's rate limit is learnt.
	var keys auth.KeyLookup = auth.Bounded(g.Keys, keyLookupTimeout, func(err error) {
		log.Error("key store unavailable; the request is answered 503 with Retry-After", "error", err)
	})
	var exact func(http.Handler) http.Handler // nil: per-instance limits only
	if cfg.RateLimit == RateLimitExact {
		g.exact = auth.NewExact(auth.ExactConfig{Counter: dynamo.NewRateCounter(cfg.DynamoDB, cfg.Tables.Sessions), Window: cfg.RateLimitWindow, Log: log})
		keys, exact = g.exact.Learn(keys), g.exact.Middleware
	}
	identity, err := g.openIdentity(ctx)
	if err != nil {
		return nil, err
	}
	if cfg.StateKey == nil {
		cfg.StateKey = stateKey(ctx, cfg, log)
	}
	runner := lambdaRunner{client: cfg.Lambda, function: cfg.SelfFunction}
	if runner.client == nil && runner.function != "" {
		if runner.client, err = awsclient.Lambda(ctx, cfg.LambdaEndpoint); err != nil {
			return nil, err
		}
	}
	// A stored result is linked, and read back within one Lambda
	// response (6 MB with the JSON escaping of the Lambda payload) or
	// from its presigned S3 URL.
	env := cfg.Env
	env.MaxResultBytes = min(env.MaxResultBytes, LambdaInlineResultBytes)
	var results resultstore.Store
	if env.MaxSpillBytes > env.MaxResultBytes {
		results = s3results.New(cfg.S3, cfg.ResultsBucket, cfg.ResultsPrefix)
	}
	front := cfg.frontTimeout
	if front == 0 {
		front = lambdahttp.FrontTimeout
	}
	g.App, err = app.New(app.Backend{
		Runtime: "aws-lambda", Catalog: g.Tools, Keys: auth.NewCached(keys, cfg.KeyCacheTTL), OAuth: resource,
		Sessions: g.Sessions, SessionErrors: func(err error) {
			log.Error("session store unavailable; the request is answered 503 with Retry-After", "error", err)
		},
		Calls: lambdahttp.Upstreams{Manager: g.Upstreams}, Surfaces: g.surfaces,
		Index: g.bucket, IndexPrefix: cfg.Prefix, BeforeSwitch: copies.BeforeSwitch,
		Upstreams: g.Upstreams, Health: g.health, Embedder: emb, Reranker: rr,
		Reindexer: reindexer{g}, Details: g.details, Metrics: g.registerMetrics, KeyList: g.Keys.List, CallSeq: callSeqStore(cfg), CallSeqAsync: true,
		// "Sync now" invokes the sync function, as /tool-rag/reindex does.
		Sync:     func(ctx context.Context) (any, error) { return reindexer{g}.Reindex(ctx, "incremental") },
		Identity: identity,
		StateKey: cfg.StateKey, NoClientStreams: true,
		Tasks: g.Sessions, TaskRunner: runner, TaskResults: taskResults{s3bucket.New(cfg.S3, cfg.Bucket)}, Cancels: g.Sessions,
		Results: results,
	}, app.Options{
		Env: env, Getenv: cfg.Getenv, ResultReadBytes: env.MaxResultBytes, UpstreamListTimeout: cfg.UpstreamListTimeout, WhileLoading: app.RejectWhileLoading, Logger: log,
		// Agents see the meta-tools: the MCP list of every catalog tool
		// is built by the first admin listing or call by name only.
		LazyToolList: true,
		// The request that caused the cold start answers before API
		// Gateway's timeout counted from the process start.
		GiveUpAt: func(ctx context.Context, first bool) time.Time {
			return lambdahttp.AnswerBy(ctx, start, first, front, answerMargin)
		},
		Limit: exact, SessionTimeout: sessionStoreTimeout,
		WrapMCP:    metrics.ObserveTools,
		MCPOptions: []server.StreamableHTTPOption{server.WithSessionIdleTTL(sessionStateIdle)},
	})
	if err != nil {
		return nil, err
	}
	copies.Tools = g.Catalog // an in-place build reads the copy Apply has just read
	g.emit = metrics.NewEmitter(g.Metrics, cfg.MetricsNamespace, cfg.MetricsInterval, cfg.metricsOut)
	g.follow = g.Follow(app.FollowConfig{
		Every: cfg.IndexRefresh, CatalogMaxAge: cfg.CatalogMaxAge, HealthEvery: cfg.HealthCacheTTL,
		Catalog: g.reloadCatalog, Health: g.reloadHealth, Now: cfg.Now,
		Where: fmt.Sprintf("s3://%s/%s%s", cfg.Bucket, cfg.Prefix, indexpub.PointerKey),
		Fetched: func() (time.Duration, int64) {
			return time.Duration(g.bucket.getNanos.Load()), g.bucket.getBytes.Load()
		},
	})
	g.served = g.follow.Handler(g.Handler)
	// The first load goes on in the background after InitWait (see
	// Config.InitWait), with the catalog copy read alongside the index.
	g.copies = &indexpub.CopyReader[*retrieve.KeywordTerms]{Bucket: g.bucket.Bucket, Prefix: cfg.Prefix,
		Decode: retrieve.DecodeKeywordTerms, Log: log}
	g.copies.Prefetch(context.WithoutCancel(ctx))
	if err := g.follow.Start(ctx, start, cfg.InitWait, cfg.loadRetry); err != nil {
		g.Upstreams.Close()
		return nil, err
	}
	go func() {
		<-g.follow.Loaded()
		g.copies.Release()
	}()
	return g, nil
}

// LambdaInlineResultBytes caps MCP_GATEWAY_MAX_RESULT_BYTES on Lambda: a
// result's JSON up to it fits Lambda's 6 MB response payload even when
// the payload's own JSON escaping doubles it; a larger one is stored in
// S3 and linked.
const LambdaInlineResultBytes = 2 << 20

// sessionStateIdle is how long mcp-go keeps the per-session transport state
// of an idle legacy session in one instance (the session itself lives in
// the sessions table and outlives it).
const sessionStateIdle = 10 * time.Minute

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

// Loaded is closed when the gateway has loaded its catalog and index,
// serves requests without waiting, and has recorded its cold start.
func (g *GatewayFunction) Loaded() <-chan struct{} { return g.follow.Loaded() }

// ColdStart returns where the first load spent its time (only Init until
// Loaded is closed).
func (g *GatewayFunction) ColdStart() ColdStart { return g.follow.ColdStart() }

// Refreshes counts the checks for a newer index.
func (g *GatewayFunction) Refreshes() int64 { return g.follow.Refreshes() }

// CatalogSource says where the in-memory catalog was last read from: "s3"
// (the catalog copy published with the index) or "dynamodb".
func (g *GatewayFunction) CatalogSource() string {
	if p := g.catalogSource.Load(); p != nil {
		return *p
	}
	return ""
}

// Close stops the upstream sessions.
func (g *GatewayFunction) Close() error { return g.Upstreams.Close() }

// ServeHTTP implements http.Handler. When IndexRefresh has passed since the
// last check, the request first checks for a newer index (one conditional
// GET of the pointer) and, when one was published, re-reads the registry
// and the catalog; a concurrent request does not wait for that. Before the
// first load, requests wait for it (app.RejectWhileLoading).
func (g *GatewayFunction) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.served.ServeHTTP(w, r)
	g.emit.Maybe(time.Now())
}

// Refresh checks for a newer index and catalog now, regardless of
// IndexRefresh.
func (g *GatewayFunction) Refresh(ctx context.Context) error { return g.follow.Refresh(ctx) }

// reloadCatalog re-reads the registry (upstream URLs) and says which
// catalog to apply: the catalog copy of the loaded index when there is
// one, otherwise the tools table. The copy is read with a conditional GET
// when it is what the catalog came from: the change is nil when it is the
// same.
func (g *GatewayFunction) reloadCatalog(ctx context.Context) (*app.Change, error) {
	servers, err := loadServers(ctx, g.Registry, g.cfg.secret, g.log)
	if err != nil {
		return nil, fmt.Errorf("read the upstream registry: %w", err)
	}
	g.Upstreams.SetServers(servers)
	surfChanged, err := g.surfaces.Load(ctx, g.Registry, g.log)
	if err != nil {
		return nil, err
	}
	if _, meta, ok := g.Indexer.Current(); ok && meta.IndexSHA256 != "" {
		c, kw, kwOK, err := g.copies.Read(ctx, meta.IndexSHA256)
		switch {
		case errors.Is(err, indexpub.ErrNotModified):
			if surfChanged { // the same catalog, new stored prompts and resources
				t, srv, _ := g.Catalog.Content()
				return &app.Change{From: &app.Content{Tools: t, Servers: srv}}, nil
			}
			return nil, nil
		case err == nil:
			g.setCatalogSource("s3")
			from := &app.Content{Tools: c.Tools, Servers: c.Servers}
			if kwOK {
				from.Keywords = kw
			}
			return &app.Change{From: from}, nil
		case !errors.Is(err, indexpub.ErrNotExist):
			g.log.Warn("catalog copy unusable; reading the tools table instead", "error", err)
		}
	}
	g.copies.Forget()
	g.setCatalogSource("dynamodb")
	return &app.Change{}, nil
}

func (g *GatewayFunction) setCatalogSource(s string) { g.catalogSource.Store(&s) }

// reloadHealth reads the health function's last probe results from the
// registry table; servers never probed count as up. When a server went
// down or came back, the MCP surface is rebuilt: prompts and resources of
// servers marked down are withheld like their tools.
func (g *GatewayFunction) reloadHealth(ctx context.Context) (rebuild bool, err error) {
	st, err := g.Registry.HealthStatus(ctx)
	if err != nil {
		return false, err
	}
	g.health.Replace(st)
	return g.surfaces.SetDown(g.health.Down()), nil
}

// details are the Lambda runtime's fields of GET /tool-rag/health.
func (g *GatewayFunction) details(context.Context) map[string]any {
	out := map[string]any{
		"catalog_source": g.CatalogSource(), "cold_start": g.ColdStart(), "refreshes": g.Refreshes(),
		"dynamodb": g.DynamoMetrics.Snapshot(),
	}
	if _, meta, ok := g.Indexer.Current(); ok {
		out["index_pointer"] = vindexInfo{SHA256: meta.IndexSHA256, BuiltAt: meta.BuiltAt, ModelID: meta.ModelID, Count: meta.Count}
	}
	if e := g.follow.IndexError(); e != "" {
		out["index_error"] = e
	}
	return out
}

type vindexInfo struct {
	SHA256  string    `json:"sha256"`
	BuiltAt time.Time `json:"built_at"`
	ModelID string    `json:"model_id"`
	Count   int       `json:"count"`
}

// registerMetrics adds the Lambda runtime's metrics to the app's.
func (g *GatewayFunction) registerMetrics(m *metrics.Registry) {
	m.CounterFunc("index_refresh_checks_total", g.Refreshes)
	dm := g.DynamoMetrics
	m.CounterFunc("dynamodb_retries_total", dm.Retries.Load)
	m.CounterFunc("dynamodb_throttles_total", dm.Throttles.Load)
	m.CounterFunc("dynamodb_conflicts_total", dm.Conflicts.Load)
	m.CounterFunc("rate_limited_exact_total", func() int64 {
		if g.exact == nil {
			return 0
		}
		return g.exact.Limited()
	})
	m.CounterFunc("rate_limit_store_errors_total", func() int64 {
		if g.exact == nil {
			return 0
		}
		return g.exact.StoreErrors()
	})
	m.CounterFunc("session_store_errors_total", func() int64 {
		if g.App == nil || g.SessionIDs == nil {
			return 0
		}
		return g.SessionIDs.StoreErrors()
	})
}

// reindexer serves POST /tool-rag/reindex: it starts the sync function
// asynchronously, or rebuilds in place when TOOL_RAG_REINDEX_INPLACE=1.
type reindexer struct{ g *GatewayFunction }

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
		// The catalog may have changed since this instance's copy was
		// read: the tools table is read again, and the index built from it.
		var applied app.Applied
		g.follow.Exclusive(func() {
			applied, err = g.Apply(ctx, app.Change{Index: m, NoUpstreams: true})
			g.copies.Forget()
			g.setCatalogSource("dynamodb")
		})
		if err = errors.Join(err, applied.IndexErr); err != nil {
			return nil, err
		}
		res := applied.Index
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
