// Package app assembles the gateway once, for every runtime. From a
// Backend — where the catalog, the keys, the sessions, the published index
// and the upstreams live — New builds the indexer, the retriever, the MCP
// server, the REST API and the authenticated routes, and the App owns what
// every runtime serves the same way: GET /health, the readiness rule,
// /metrics and Apply, the one step that hands a new catalog to every
// consumer.
//
// pkg/local (SQLite, a directory, net/http) and pkg/awsrt (DynamoDB, S3,
// Lambda) only build a Backend and serve App.Handler over their transport.
package app

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/server"
	"go.opentelemetry.io/otel/attribute"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/console"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/health"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/metrics/usage"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/ragapi"
	"github.com/toolrag/mcp-gateway/pkg/resultstore"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
	"github.com/toolrag/mcp-gateway/pkg/upconnect"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Version is reported in initialize and /health (set with -ldflags
// "-X github.com/toolrag/mcp-gateway/pkg/app.Version=...").
var Version = "dev"

// Backend is what a runtime provides: where things live.
type Backend struct {
	// Runtime names the runtime in /health: "local" or "aws-lambda".
	Runtime string
	// Catalog is the catalog store. The App reads it into one in-memory
	// copy (App.Catalog) per change, and asks it only for a tool added
	// since (GET /tool-rag/tool/{id}).
	Catalog catalog.Reader
	// Keys looks up API keys; nil only with Env.WithoutAuth.
	Keys auth.KeyLookup
	// OAuth is the OAuth resource server: access tokens next to API keys,
	// its metadata routes and WWW-Authenticate challenge (nil or no
	// Validator: API keys only).
	OAuth *oauth.Resource
	// Sessions keeps legacy-protocol sessions and their registered tools.
	Sessions session.Store
	// SessionErrors, when set, is told about session-store failures.
	SessionErrors func(error)
	// Index is where the vector index is published (a directory or S3),
	// under IndexPrefix; BeforeSwitch is called before a built index
	// becomes the published one.
	Index        indexpub.Bucket
	IndexPrefix  string
	BeforeSwitch func(ctx context.Context, next indexpub.Pointer) error
	// Upstreams reaches the upstream servers; Health says which are down.
	// Calls, when set, is what the MCP server calls them through (a
	// runtime's limits around Upstreams).
	Upstreams *upstream.Manager
	Calls     gateway.Upstreams
	// Surfaces, when set, supplies the upstreams' prompts and resources
	// stored elsewhere, so that Apply contacts no upstream.
	Surfaces gateway.SurfaceSource
	Health   *health.Tracker
	Embedder embed.Embedder
	Reranker retrieve.Reranker // optional
	// Planner enables the plan meta-tool (nil: the one TOOL_RAG_PLANNER_*
	// configures through Options.Getenv, if any).
	Planner gateway.Planner
	// Reindexer serves POST /tool-rag/reindex.
	Reindexer ragapi.Reindexer
	// KeyList lists the API keys for the operator console (nil: none).
	KeyList func(ctx context.Context) ([]policy.Key, error)
	// Sync runs the console's "sync now" (nil: not offered).
	Sync func(ctx context.Context) (any, error)
	// Details adds the runtime's own fields to GET /tool-rag/health.
	Details func(ctx context.Context) map[string]any
	// Metrics registers the runtime's own metrics next to the App's.
	Metrics func(m *metrics.Registry)
	// CallSeq keeps the opt-in call-sequence counts; used only when
	// Env.CallSequences is on (see callseq.go). PruneCallSeq: this
	// process drops the counts of tools that left the catalog when it
	// applies one (the runtime that syncs the catalog).
	CallSeq      callseq.Store
	PruneCallSeq bool
	// CallSeqAsync reads the counts in the background instead of within
	// Apply (the AWS runtime: a cold start does not wait for the scan).
	CallSeqAsync bool
	// Identity, when set, makes callers reach per-principal upstreams as
	// themselves and serves the connect links and /tool-rag/connections
	// (pkg/upconnect).
	Identity *upconnect.Service
	// StateKey seals the gateway's input_required state: every instance
	// that may get a client's retry holds the same (nil: a random key, this
	// instance only). NoClientStreams: the runtime keeps no stream to a
	// client between requests (Lambda), see gateway.Config.
	StateKey        []byte
	NoClientStreams bool
	// Tasks keeps the records of MCP tasks (nil: the gateway serves no
	// tasks); TaskRunner runs the gateway's own tasks (nil: in process)
	// and TaskResults keeps their results outside the records (optional).
	Tasks       session.TaskStore
	TaskRunner  gateway.TaskRunner
	TaskResults gateway.TaskResultStore
	// Cancels carries cancellations between instances (the shared session
	// store; nil where one process serves every request).
	Cancels gateway.Cancels
	// Results, when set, keeps tool results over Env.MaxResultBytes (up to
	// Env.MaxSpillBytes), answered as a preview and a resource_link. A
	// store that is also an http.Handler serves its signed download URLs
	// under resultstore.DownloadPath.
	Results resultstore.Store
}

// Options tunes the assembly.
type Options struct {
	// Env holds the process settings shared by the runtimes.
	Env config.Env
	// Getenv reads the settings the App derives itself for every runtime
	// (the plan meta-tool's TOOL_RAG_PLANNER_*); default os.Getenv.
	Getenv func(string) string
	// UpstreamListTimeout bounds listing one upstream's prompts and
	// resources (0: the gateway's default).
	UpstreamListTimeout time.Duration
	// LazyToolList builds the MCP tool list only when a caller needs it
	// (gateway.Config.LazyToolList; the AWS runtime).
	LazyToolList bool
	// WhileLoading is what a request meets before the first catalog is
	// applied (see WhileLoading); StartupWait bounds the wait of
	// ServeWhileLoading (default 20s).
	WhileLoading WhileLoading
	StartupWait  time.Duration
	// ConsolePoll is how often the console's servers page refreshes
	// (0: the console's default).
	ConsolePoll time.Duration
	// GiveUpAt, under RejectWhileLoading, is when a request waiting for
	// the first catalog is answered 503 (first: it is the first request
	// the process serves); nil: 1s before the request's deadline.
	GiveUpAt func(ctx context.Context, first bool) time.Time
	// Limit, when set, wraps the MCP endpoint and the REST API right after
	// authentication (e.g. a rate limit shared across instances); WrapMCP
	// wraps the MCP handler inside the readiness gate (e.g. per-tool
	// metrics in the App's registry).
	Limit   func(http.Handler) http.Handler
	WrapMCP func(*metrics.Registry, http.Handler) http.Handler
	// SessionTimeout bounds one session-store call (0: the default).
	SessionTimeout time.Duration
	// MCPOptions are extra mcp-go transport options.
	MCPOptions []server.StreamableHTTPOption
	// ResultReadBytes bounds the body of a resources/read of a stored
	// result (0: none); a larger one is downloaded from its signed URL.
	ResultReadBytes int64
	Logger          *slog.Logger
}

// App is the assembled gateway.
type App struct {
	// Catalog is the one in-memory catalog copy the retriever, the
	// indexer, the MCP server and the REST API read.
	Catalog   *catalog.Copy
	Indexer   *indexer.Indexer
	Retriever *retrieve.Retriever
	MCP       *gateway.Server
	Metrics   *metrics.Registry
	// SessionIDs issues and checks legacy session ids against
	// Backend.Sessions (its StoreErrors count the store's failures).
	SessionIDs *session.IDManager
	// Usage is this process's per-key and per-server call statistics
	// (the operator console's usage page).
	Usage *usage.Recorder
	// CallSeq counts the call sequences of the sessions (nil unless
	// Env.CallSequences is on and the Backend has a CallSeq store).
	CallSeq *callseq.Recorder
	seqMu   sync.Mutex   // one read of the counts at a time
	seqAt   atomic.Int64 // unix ns of the last read of the counts started
	// Handler serves GET /health, the MCP endpoint (Env.MCPPath) and
	// /tool-rag/*, the last two behind authentication.
	Handler http.Handler
	// Live tracks the authenticated requests in flight: Live.Recheck, after
	// the keys or grants change, ends the open streams and running calls
	// of credentials that were revoked (and their sessions).
	Live auth.Live

	b       Backend
	o       Options
	log     *slog.Logger
	started time.Time
	authC   auth.Counters

	applyMu sync.Mutex
	ready   atomic.Bool
	stored  atomic.Bool   // a non-empty stored catalog is served (Change.Stored)
	firstUp atomic.Bool   // a first load is under way (Change.Stored was applied)
	invoked atomic.Bool   // a request has reached the readiness gate
	loaded  chan struct{} // closed when the first full catalog is applied
	once    sync.Once
	// catalog counts for /metrics, recorded by Apply (not per scrape)
	tools, stale atomic.Int64
}

// New builds every part from b. It reads nothing yet: call Apply.
func New(b Backend, o Options) (*App, error) {
	if b.Catalog == nil || b.Sessions == nil || b.Upstreams == nil || b.Embedder == nil {
		return nil, errors.New("app: Backend.Catalog, Sessions, Upstreams and Embedder are required")
	}
	if b.Keys == nil && !o.Env.WithoutAuth {
		return nil, errors.New("app: Backend.Keys is required unless TOOL_RAG_WITHOUT_AUTH is set")
	}
	if b.Health == nil {
		b.Health = health.NewTracker()
	}
	// A call to a server the health checks found down answers at once.
	b.Upstreams.SetHealthView(b.Health.DownView)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.StartupWait <= 0 {
		o.StartupWait = DefaultStartupWait
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	// The App derives its own inputs, the same on every runtime: the
	// planner from the environment, the unprefixed servers from the
	// upstreams' configs (again at each Apply: a runtime may learn them
	// with the registry), the proxy trust from Env.
	if b.Planner == nil {
		var err error
		if b.Planner, err = PlannerFromEnv(o.Getenv); err != nil {
			return nil, err
		}
	}
	a := &App{b: b, o: o, log: o.Logger, started: time.Now().UTC(), loaded: make(chan struct{}),
		Catalog: catalog.NewCopy(b.Catalog), Metrics: metrics.New(), Usage: usage.New()}
	var err error
	a.Indexer, err = indexer.New(indexer.Config{Catalog: a.Catalog, Embedder: b.Embedder, Bucket: b.Index,
		Prefix: b.IndexPrefix, BeforeSwitch: b.BeforeSwitch, Logger: a.log})
	if err != nil {
		return nil, err
	}
	a.Retriever, err = retrieve.New(retrieve.Config{Tools: a.Catalog, Index: a.Indexer, Embedder: b.Embedder,
		Reranker: b.Reranker, ServerUp: b.Health.Up, Logger: a.log})
	if err != nil {
		return nil, err
	}
	env := o.Env
	seq := a.newCallSeq()
	var calls gateway.Upstreams = b.Upstreams
	if b.Calls != nil {
		calls = b.Calls
	}
	a.MCP, err = gateway.New(gateway.Config{
		Version: Version, Catalog: a.Catalog, Upstreams: calls, Retriever: retrieval{a, usage.FindTools}, Surfaces: b.Surfaces,
		Sessions: b.Sessions, Planner: b.Planner, MaxParallel: env.MaxParallel,
		ShortlistDescChars: env.ShortlistDescChars, Unprefixed: b.Upstreams.Unprefixed(),
		UpstreamListTimeout: o.UpstreamListTimeout, MaxListItems: env.MaxTools, Logger: a.log, OnCall: a.recordCall,
		LazyToolList: o.LazyToolList, Sequences: seq, Identity: identityOf(b),
		StateKey: b.StateKey, InputTTL: env.InputTTL, NoClientStreams: b.NoClientStreams,
		Tasks: b.Tasks, TaskRunner: b.TaskRunner, TaskResults: b.TaskResults, Cancels: b.Cancels,
		Results: resultsOf(b, env), BigResults: gateway.BigResults{InlineBytes: env.MaxResultBytes, PreviewBytes: env.ResultPreviewBytes,
			TTL: env.ResultTTL, URLTTL: env.ResultURLTTL, ReadBytes: o.ResultReadBytes},
	})
	if err != nil {
		return nil, err
	}
	a.registerMetrics()
	a.registerCallSeqMetrics(a.Metrics)
	con, err := a.newConsole()
	if err != nil {
		return nil, err
	}
	a.Live.OnRevoked = a.endSessions
	a.Handler = a.routes(con)
	return a, nil
}

// withResultBase tells a result store that signs gateway URLs the base
// URL the request reached (when no public URL is configured).
func withResultBase(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(resultstore.WithBaseURL(r.Context(), upconnect.BaseURLOf(r))))
	})
}

// resultsOf is the result store, when results are stored at all.
func resultsOf(b Backend, env config.Env) resultstore.Store {
	if b.Results == nil || env.MaxSpillBytes <= env.MaxResultBytes {
		return nil
	}
	return b.Results
}

// endSessions deletes the sessions of a principal whose credential was
// revoked, where the session store can (session.OwnerDeleter).
func (a *App) endSessions(principal string) {
	d, ok := a.b.Sessions.(session.OwnerDeleter)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := d.DeleteOwner(ctx, principal)
	if err != nil {
		a.log.Warn("could not end the sessions of a revoked credential", "error", err)
		return
	}
	if n > 0 {
		a.log.Info("revoked credential: its sessions ended", "sessions", n)
	}
}

// routes is the one HTTP surface: /health without authentication, the MCP
// endpoint, the REST API and the console's admin endpoints behind it. Authentication does not wait for
// the catalog: a caller learns that the gateway is still loading only
// after its key is accepted.
func (a *App) routes(con *console.Console) http.Handler {
	env := a.o.Env
	res := a.b.OAuth
	if res == nil {
		res = &oauth.Resource{MCPPath: env.MCPPath}
	}
	authCfg := auth.Config{Keys: a.b.Keys, Disabled: env.WithoutAuth, Counters: &a.authC, OnRateLimited: a.Usage.RateLimitedRequest,
		Tokens: res.Tokens(), Challenger: res, FailureLimit: env.AuthFailureLimit(), TrustForwardedFor: env.TrustForwardedFor,
		Live: &a.Live}
	ids := session.NewIDManager(a.b.Sessions, env.SessionTTL)
	if a.o.SessionTimeout > 0 {
		ids.Timeout = a.o.SessionTimeout
	}
	ids.OnError = a.b.SessionErrors
	a.SessionIDs = ids
	api := ragapi.New(ragapi.Config{Retriever: retrieval{a, usage.REST}, Tools: a.Catalog, Reindexer: a.b.Reindexer,
		Metrics: a.Metrics, Health: a.details, ServerUp: a.serversUp, MaxBodyBytes: env.MaxBodyBytes})
	mcp := a.MCP.Handler(gateway.HTTPOptions{
		SessionIDs: ids, MaxBodyBytes: env.MaxBodyBytes, Options: a.o.MCPOptions,
		Observe: newRequestMetrics(a.Metrics).observe,
	})
	mux := http.NewServeMux()
	res.Routes(mux)
	mux.HandleFunc("GET /health", a.serveHealth)
	limit := a.o.Limit
	if limit == nil {
		limit = func(h http.Handler) http.Handler { return h }
	}
	mcp = ids.Guard(mcp)
	if a.o.WrapMCP != nil {
		mcp = a.o.WrapMCP(a.Metrics, mcp)
	}
	if a.b.Identity != nil {
		mcp = withBaseURL(mcp)
		a.b.Identity.Routes(mux, func(h http.Handler) http.Handler { return auth.Middleware(authCfg, limit(h)) })
	}
	if a.b.Identity != nil {
		mcp = withSubjectToken(mcp)
	}
	if h, ok := a.b.Results.(http.Handler); ok && resultsOf(a.b, env) != nil {
		// Signed download URLs: the signature is the credential.
		mux.Handle("GET "+resultstore.DownloadPath+"{id}", h)
		mcp = withResultBase(mcp)
	}
	authn := func(h http.Handler) http.Handler { return auth.Middleware(authCfg, h) }
	mux.Handle(env.MCPPath, tracing.Around("authenticate", authn, limit(a.gate(mcp)), principalAttrs))
	mux.Handle("/tool-rag/", tracing.Around("authenticate", authn, limit(a.gate(api.Handler())), principalAttrs))
	a.mountConsole(mux, con, authCfg)
	if env.WithoutAuth {
		return tracing.Middleware(sameMachineOnly(mux))
	}
	return tracing.Middleware(mux)
}

// principalAttrs names the authenticated principal on the authenticate
// span as audit lines do (the key id).
func principalAttrs(ctx context.Context) []attribute.KeyValue {
	pol, ok := policy.FromContext(ctx)
	if !ok {
		return nil
	}
	return []attribute.KeyValue{attribute.String("toolrag.principal", pol.KeyID)}
}

// Content is a catalog given to Apply.
type Content struct {
	Tools   []catalog.Tool
	Servers []catalog.Server
	// Keywords, when set, is the keyword analysis published with the
	// catalog: the keyword index takes each tool's terms from it instead
	// of analysing the tool, when they are for its current content.
	Keywords *retrieve.KeywordTerms
}

// Change is one catalog change for Apply.
type Change struct {
	// From is the new catalog (e.g. the copy published with the index);
	// nil reads Backend.Catalog once.
	From *Content
	// Index, when set, builds the vector index from the new catalog in
	// that mode (full, incremental, off) before the keyword index and the
	// MCP surface are updated. A failed build is reported in
	// Applied.IndexErr; retrieval keeps the previous index, or the keyword
	// fallback.
	Index indexer.Mode
	// NoUpstreams does not ask the upstreams for their prompts and
	// resources again (a reindex; or the stored catalog served at start).
	NoUpstreams bool
	// Stored marks a catalog served before the first load (the local
	// runtime's stored catalog while its first sync runs): only the MCP
	// tool list is updated (the keyword index is built by the first
	// retrieval), no upstream is asked, and the App does not become ready.
	// It also says that a first load is under way: under
	// ServeWhileLoading, retrievals on an empty catalog wait for it.
	Stored bool
}

// Applied says what Apply did and where it spent its time.
type Applied struct {
	Index    indexer.BuildResult
	IndexErr error
	Read     time.Duration // reading the store (0 when Change.From was given)
	Keywords time.Duration // the keyword index (concurrent with Surface)
	Surface  time.Duration // the MCP tool list, prompts and resources
}

// Apply hands a new catalog to every consumer, always in this order:
//
//  1. the in-memory copy (App.Catalog) is replaced: by Change.From, or by
//     one read of the store;
//  2. when Change.Index is set, the vector index is built from that copy
//     (a runtime whose index is built elsewhere refreshes it before);
//  3. the retriever's keyword index and the MCP surface (the tool list,
//     then the upstreams' prompts and resources) are rebuilt from the
//     same copy, concurrently;
//  4. the catalog counts are recorded for /metrics and the App is ready.
//
// Applies are serialised. On a read error nothing changes.
func (a *App) Apply(ctx context.Context, c Change) (Applied, error) {
	a.applyMu.Lock()
	defer a.applyMu.Unlock()
	var out Applied
	if c.From != nil {
		a.Catalog.Set(c.From.Tools, c.From.Servers)
		if c.From.Keywords != nil && !c.Stored {
			a.Retriever.UsePrepared(c.From.Keywords)
		}
	} else {
		t0 := time.Now()
		if err := a.Catalog.Load(ctx); err != nil {
			return out, err
		}
		out.Read = time.Since(t0)
	}
	a.MCP.SetUnprefixed(a.b.Upstreams.Unprefixed())
	if c.Stored {
		t0 := time.Now()
		err := a.MCP.ReloadTools(ctx)
		out.Surface = time.Since(t0)
		a.countCatalog()
		a.stored.Store(err == nil && a.Catalog.Len() > 0)
		a.firstUp.Store(true)
		return out, err
	}
	if c.Index != "" {
		out.Index, out.IndexErr = a.Indexer.Build(ctx, c.Index)
	}
	t0 := time.Now()
	var (
		wg    sync.WaitGroup
		kwErr error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		kwErr = a.Retriever.Sync(ctx)
		out.Keywords = time.Since(t0)
	}()
	switch {
	case a.CallSeq != nil && a.b.CallSeqAsync:
		go a.loadCallSequences(context.WithoutCancel(ctx))
	case a.CallSeq != nil:
		wg.Add(1)
		go func() {
			defer wg.Done()
			a.loadCallSequences(ctx)
		}()
	}
	var err error
	if c.NoUpstreams {
		err = a.MCP.ReloadTools(ctx)
	} else {
		err = a.MCP.Reload(ctx)
	}
	out.Surface = time.Since(t0)
	wg.Wait()
	if err := errors.Join(kwErr, err); err != nil {
		return out, err
	}
	a.countCatalog()
	a.ready.Store(true)
	a.once.Do(func() { close(a.loaded) })
	return out, nil
}

// countCatalog records the served catalog's counts for /metrics.
func (a *App) countCatalog() {
	tools, stale := a.MCP.CatalogCounts()
	a.tools.Store(int64(tools))
	a.stale.Store(int64(stale))
}

// serversUp reports each configured server and whether it is up (a
// non-admin key's /tool-rag/health counts the ones it is granted).
func (a *App) serversUp() map[string]bool {
	out := map[string]bool{}
	for _, id := range a.b.Upstreams.Servers() {
		out[id] = a.b.Health.Up(id)
	}
	return out
}

// recordCall counts a tool call in the usage statistics, with its trace
// id when it was traced (the console links to it).
func (a *App) recordCall(ctx context.Context, keyID, tool, outcome string, d time.Duration) {
	a.Usage.TracedToolCall(keyID, tool, outcome, tracing.SampledTraceID(ctx), d)
}
