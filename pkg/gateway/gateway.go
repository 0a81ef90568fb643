// Package gateway is the merged MCP server: it exposes the tools, prompts
// and resources of every upstream under one namespace (server__tool,
// server__prompt, gateway://server/uri), the discovery meta-tools
// (find_tools, describe_tool, run_tool, run_tools, plan) and enforces the
// caller's policy on every path.
package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/internal/sealed"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/resultstore"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// Upstreams reaches the upstream servers (pkg/upstream.Manager).
type Upstreams interface {
	Servers() []string
	CallTool(ctx context.Context, server, name string, args map[string]any) (*mcp.CallToolResult, error)
	ListPrompts(ctx context.Context, server string) ([]mcp.Prompt, error)
	GetPrompt(ctx context.Context, server, name string, args map[string]string) (*mcp.GetPromptResult, error)
	ListResources(ctx context.Context, server string) ([]mcp.Resource, error)
	ListResourceTemplates(ctx context.Context, server string) ([]mcp.ResourceTemplate, error)
	ReadResource(ctx context.Context, server, uri string) (*mcp.ReadResourceResult, error)
}

// Catalog is the tool catalog (a catalog.Store satisfies it).
type Catalog interface {
	ListTools(ctx context.Context) ([]catalog.Tool, error)
}

// Retriever ranks tools for find_tools and plan.
type Retriever interface {
	Retrieve(ctx context.Context, req retrieve.Request) (retrieve.Response, error)
}

// Sessions remembers the tools registered for a legacy-protocol session
// (pkg/session.Store satisfies it).
type Sessions interface {
	AddTools(ctx context.Context, sessionID string, toolIDs []string) error
	Tools(ctx context.Context, sessionID string) ([]string, error)
}

// CallObserver is told which tool a session called (pkg/callseq.Recorder).
type CallObserver interface {
	ToolCalled(keyID, sessionID, toolID string)
}

// Planner turns a task into an advisory multi-step plan (pkg/planner).
type Planner interface {
	Plan(ctx context.Context, query string, candidates []PlanCandidate) (json.RawMessage, error)
}

// PlanCandidate is a tool the planner may use.
type PlanCandidate struct {
	CallName    string          `json:"call_name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	ToolType    string          `json:"tool_type,omitempty"`
}

// Config configures a Server.
type Config struct {
	Name, Version string
	Catalog       Catalog
	Upstreams     Upstreams
	Retriever     Retriever
	Sessions      Sessions
	Planner       Planner // optional: enables the plan meta-tool

	MaxParallel        int // run_tools concurrency cap (TOOL_RAG_MAX_PARALLEL), default 8
	MaxBatch           int // run_tools calls per request, default 32
	ShortlistDescChars int // find_tools description cap, 0 = full
	MaxTopK            int // default 50
	MaxQueryChars      int // default 2000
	// Unprefixed lists servers whose tools, prompts and resources are
	// exposed under their original names (no server__ prefix, no
	// gateway:// URI), e.g. when fronting one server for clients that
	// expect its names. A name another server already exposes keeps the
	// prefixed form. Policy checks are unchanged.
	Unprefixed map[string]bool
	// MaxListItems bounds the prompts, the resources and the resource
	// templates served per server, each (default 2,000, as the tool cap
	// TOOL_RAG_MAX_TOOLS_PER_SERVER); a server over it is served its
	// first MaxListItems and reported (ListsDegraded).
	MaxListItems int
	// UpstreamListTimeout bounds listing prompts/resources of one upstream
	// during Reload. Default 10s.
	UpstreamListTimeout time.Duration
	// Surfaces, when set, supplies the upstreams' prompts and resources
	// instead of listing them from the upstreams in Reload.
	Surfaces SurfaceSource
	// StreamGrace is how long a sampling or elicitation request from an
	// upstream waits for its client to open the session's GET stream (a
	// client opens it after initialize, and its first tool call can
	// overtake it). Default 2s.
	StreamGrace time.Duration
	// StateKey seals the requestState of the input_required results the
	// gateway answers 2026-07-28 clients with (roundtrip.go): every
	// instance that may receive a client's retry must hold the same key.
	// Nil: a random key, so a retry is accepted by this instance only.
	StateKey []byte
	// InputTTL is how long a client has to answer an input_required
	// result (the sealed state's expiry). Default 10 minutes.
	InputTTL time.Duration
	// NoClientStreams says that the runtime keeps no stream to a client
	// between requests (AWS Lambda): a 2025-era client cannot be asked
	// for sampling or elicitation, and is told so at once.
	NoClientStreams bool
	// Tasks, when set, keeps the records of the tasks clients start with a
	// task-augmented tools/call (tasks.go; the session store). Nil: the
	// gateway serves no tasks.
	Tasks session.TaskStore
	// TaskRunner runs the calls the gateway runs as its own tasks (nil:
	// in this process). TaskResults, when set, keeps their results
	// outside the task records (a TaskResultStore).
	TaskRunner  TaskRunner
	TaskResults TaskResultStore
	// Cancels, when set, carries cancellations between instances
	// (cancels.go: a notifications/cancelled that reaches an instance not
	// running the call). CancelWatch paces the checks of the running calls
	// and of gateway-run tasks (their task records).
	Cancels     Cancels
	CancelWatch CancelWatch
	Logger      *slog.Logger
	// OnCall, when set, is told of every tool call after its audit line
	// (key id, call name, outcome, duration; ctx carries the call's span):
	// usage statistics. It must not block.
	OnCall func(ctx context.Context, keyID, tool, outcome string, d time.Duration)
	// Sequences, when set, is told of every successful catalog tool call
	// with the caller's key and session (the opt-in call-sequence counts,
	// pkg/callseq.Recorder). It must not block.
	Sequences CallObserver
	// LazyToolList defers the MCP tool list (one mcp-go tool per catalog
	// tool) until a caller needs it: an admin key's tools/list, or a
	// tools/call of a catalog tool by name. Until then tools/list answers
	// the meta-tools and the tools registered to the session, and a reload
	// touches no mcp-go state. On AWS Lambda most instances serve agents
	// that see only the meta-tools: they never build the list (at 100k
	// tools, ~100 MB of heap and most of a cold start's MCP surface), and
	// the tools/list_changed notifications it would feed cannot reach a
	// client there (no GET streams). Registering the list tells the
	// sessions open at that moment, once, that the tool list changed.
	LazyToolList bool
	// Identity, when set, gives calls to per-principal servers the
	// caller's own credential (identity_hop.go).
	Identity Identity
	// Results, when set, keeps results over BigResults.InlineBytes, which
	// are then answered as a preview and a resource_link (bigresult.go).
	Results    resultstore.Store
	BigResults BigResults
}

// Server is the merged MCP server: meta-tools, passthrough tools, prompts
// and resources of every upstream behind one endpoint.
type Server struct {
	cfg Config
	// listsDegraded: servers whose prompt or resource lists were cut (capSurfaces)
	listsDegraded atomic.Pointer[map[string]string]
	srv           *server.MCPServer
	log           *slog.Logger
	tools         atomic.Pointer[toolSet]
	schemas       schemaCache
	// regMu serialises ReloadTools; registered fingerprints what it handed
	// to mcp-go (exposed name → tool id and content hash), so that a reload
	// registers only what changed.
	regMu      sync.Mutex
	registered map[string]string
	// listBuilt: the MCP tool list is registered with mcp-go (always,
	// unless Config.LazyToolList; then from the first caller that needs
	// it, under regMu).
	listBuilt atomic.Bool
	// per-server snapshots of prompts and resources, kept when a server is
	// unreachable during a reload.
	surfMu  sync.Mutex
	surface map[string]serverSurface
	// surfNames resolves exposed prompt names and resource URIs of the
	// current surface.
	surfNames atomic.Pointer[surfaceNames]
	subs      subscriptions
	// streams counts each session's open GET streams: mcp-go sends
	// server-initiated requests (sampling, elicitation) only there.
	streamMu sync.Mutex
	streams  map[string]int // session id → open GET streams
	// streamOpened is closed (and replaced) when a GET stream opens.
	streamOpened chan struct{}
	// initGate holds the requests of sessions whose initialize request is
	// still being handled.
	initGate mcpfix.InitGate
	// unprefixed is Config.Unprefixed, replaced by SetUnprefixed.
	unprefixed atomic.Pointer[map[string]bool]
	// sessions follows the legacy sessions registered with mcp-go on this
	// instance, inflight the calls answered by fastCall (inflightKey →
	// cancel).
	sessions mcpfix.Sessions
	inflight sync.Map
	// box seals the state of input_required results (Config.StateKey).
	box *sealed.Box
	// taskCancels cancels the gateway-run tasks running in this process
	// (task id → context.CancelFunc).
	taskCancels sync.Map
	// watched cancels the tools/call requests watching their cancel
	// record (cancel key → context.CancelFunc).
	watched sync.Map
	Metrics Metrics
}

type toolSet struct {
	byID    map[string]catalog.Tool
	byName  map[string]string // exposed name → tool id; tool ids map to themselves
	exposed map[string]string // tool id → exposed name
	appOnly map[string]bool   // ids of MCP App tools the model does not see (catalog.AppOnly)
	// verbatim: by tool id, the members of its upstream tool mcp-go's
	// Tool does not carry as sent, set over tools/list answers (patchListed)
	verbatim map[string]map[string]json.RawMessage
}

// resolve maps a call_name (the exposed name or the tool id) to the tool id.
func (s *toolSet) resolve(callName string) (string, bool) {
	id, ok := s.byName[callName]
	return id, ok
}

// name returns the name a tool is exposed under.
func (s *toolSet) name(id string) string {
	if n, ok := s.exposed[id]; ok {
		return n
	}
	return id
}

// origin is what an exposed prompt or resource stands for.
type origin struct{ server, name string }

type surfaceNames struct {
	prompts   map[string]origin // exposed prompt name → server, original name
	resources map[string]origin // canonical exposed URI of an unprefixed server → server, canonical original URI
	templates []unprefixedTemplate
	// exposedTemplates maps each listed template, exactly as listed, to its
	// server and the upstream's own template (completion refs name one).
	exposedTemplates map[string]origin
}

type unprefixedTemplate struct {
	server string
	tmpl   *mcp.URITemplate
}

type serverSurface struct {
	prompts   []mcp.Prompt
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
}

// Instructions returned by initialize.
const (
	instructionsAgent = "This gateway fronts many tool servers. Do not guess tool names: " +
		"first call find_tools with one short query per capability you need, in `queries`, including the steps your task implies " +
		"(e.g. 'screenshot the pricing page and save it' → ['open a web page', 'take a screenshot', 'write a file']; " +
		"'email Bob tomorrow's forecast' → ['weather forecast', 'current date', 'send an email']); it returns matching tools per query with their call_name, input_schema and a match level. " +
		"then execute a tool with run_tool {call_name, arguments} (or run_tools for several independent calls at once). " +
		"Use describe_tool to fetch one tool's full schema when find_tools was called with include_schema=false."
	instructionsAdmin = "This gateway fronts many tool servers; tools/list shows the merged catalog (server__tool names). " +
		"find_tools searches it semantically; run_tool and run_tools execute tools by call_name."
)

// New creates a Server. Call Reload to load the catalog.
func New(cfg Config) (*Server, error) {
	if cfg.Catalog == nil || cfg.Upstreams == nil || cfg.Retriever == nil || cfg.Sessions == nil {
		return nil, errors.New("gateway: Catalog, Upstreams, Retriever and Sessions are required")
	}
	if cfg.Name == "" {
		cfg.Name = "toolrag-mcp-gateway"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxParallel <= 0 {
		cfg.MaxParallel = 8
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 32
	}
	if cfg.MaxTopK <= 0 {
		cfg.MaxTopK = 50
	}
	if cfg.MaxQueryChars <= 0 {
		cfg.MaxQueryChars = 2000
	}
	if cfg.StreamGrace <= 0 {
		cfg.StreamGrace = 2 * time.Second
	}
	if cfg.UpstreamListTimeout <= 0 {
		cfg.UpstreamListTimeout = 10 * time.Second
	}
	if cfg.InputTTL <= 0 {
		cfg.InputTTL = 10 * time.Minute
	}
	if cfg.CancelWatch.After <= 0 {
		cfg.CancelWatch.After = 5 * time.Second
	}
	if cfg.CancelWatch.Every <= 0 {
		cfg.CancelWatch.Every = 2 * time.Second
	}
	box := sealed.Random()
	if cfg.StateKey != nil {
		var err error
		if box, err = sealed.New(cfg.StateKey); err != nil {
			return nil, fmt.Errorf("gateway: the state key: %w", err)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// No log line of the gateway (or of mcp-go, which logs through it)
	// carries a session id or a credential in a URL.
	cfg.Logger = slog.New(redact.Handler(cfg.Logger.Handler()))
	g := &Server{cfg: cfg, log: cfg.Logger, surface: map[string]serverSurface{}, box: box}
	g.tools.Store(&toolSet{byID: map[string]catalog.Tool{}, byName: map[string]string{}, exposed: map[string]string{}})
	g.SetUnprefixed(cfg.Unprefixed)
	g.surfNames.Store(&surfaceNames{prompts: map[string]origin{}, resources: map[string]origin{}, exposedTemplates: map[string]origin{}})

	hooks := &server.Hooks{}
	hooks.AddAfterInitialize(func(ctx context.Context, _ any, _ *mcp.InitializeRequest, res *mcp.InitializeResult) {
		if p, ok := policy.FromContext(ctx); ok && p.Admin {
			res.Instructions = instructionsAdmin
		}
	})
	hooks.AddAfterListResources(func(ctx context.Context, _ any, _ *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
		res.Resources = g.filterResources(ctx, res.Resources)
	})
	hooks.AddAfterListResourceTemplates(func(ctx context.Context, _ any, _ *mcp.ListResourceTemplatesRequest, res *mcp.ListResourceTemplatesResult) {
		res.ResourceTemplates = g.filterTemplates(ctx, res.ResourceTemplates)
	})
	hooks.AddOnRegisterSession(g.sessions.Register)
	hooks.AddOnUnregisterSession(g.sessions.Unregister)
	_, canSubscribe := cfg.Upstreams.(Subscriber)
	if canSubscribe {
		hooks.AddOnRequestInitialization(g.subscribeHook)
		hooks.AddOnUnregisterSession(g.endSession)
	}
	opts := []server.ServerOption{
		server.WithToolCapabilities(true),
		server.WithPromptCapabilities(true),
		server.WithResourceCapabilities(canSubscribe, true),
		server.WithInstructions(instructionsAgent),
		server.WithToolFilter(g.filterTools),
		server.WithPromptFilter(g.filterPrompts),
		server.WithHooks(hooks),
		server.WithRecovery(),
		server.WithMethodCacheHints(mcp.MethodToolsList, 0, mcp.CacheScopePrivate),
		server.WithLogging(),
		server.WithCompletions(),
		server.WithPromptCompletionProvider(completions{g}),
		server.WithResourceCompletionProvider(completions{g}),
		server.WithPaginationLimit(1000),
		server.WithExtensions(gatewayExtensions(cfg.Tasks != nil)),
	}
	if cfg.Tasks != nil {
		// tools/call with a task, tasks/get, tasks/result, tasks/cancel
		// and tasks/list are answered by the gateway (tasks.go).
		opts = append(opts, server.WithTaskCapabilities(true, true, true))
	}
	g.srv = server.NewMCPServer(cfg.Name, cfg.Version, opts...)
	g.srv.SetTools(g.metaTools()...)
	if up, ok := cfg.Upstreams.(Subscriber); ok {
		up.OnResourceUpdated(g.resourceUpdated)
	}
	return g, nil
}

// MCPServer returns the underlying mcp-go server.
func (g *Server) MCPServer() *server.MCPServer { return g.srv }

// Reload re-reads the tool catalog and the upstreams' prompts and resources
// and re-registers them. A server that cannot be listed keeps its previous
// prompts and resources.
func (g *Server) Reload(ctx context.Context) error {
	if err := g.ReloadTools(ctx); err != nil {
		return err
	}
	g.reloadSurface(ctx)
	return nil
}

// ReloadTools re-reads the tool catalog only, without asking any upstream
// (a restarted gateway serves its stored catalog while it syncs).
func (g *Server) ReloadTools(ctx context.Context) error {
	g.regMu.Lock()
	defer g.regMu.Unlock()
	tools, err := catalog.SharedTools(ctx, g.cfg.Catalog) // read only
	if err != nil {
		return fmt.Errorf("reload catalog: %w", err)
	}
	set := &toolSet{byID: make(map[string]catalog.Tool, len(tools)), byName: make(map[string]string, len(tools)), exposed: map[string]string{}}
	for _, t := range tools {
		set.byID[t.ID] = t
		set.byName[t.ID] = t.ID
	}
	set.appOnly = appOnlyIDs(tools)
	set.verbatim = verbatimFields(tools)
	for _, t := range tools {
		if g.isUnprefixed(t.Server) {
			// An unprefixed name must not look like another server's
			// (server__tool) nor take a name already exposed.
			if _, taken := set.byName[t.Name]; !taken && !isMeta(t.Name) && !strings.Contains(t.Name, catalog.Separator) {
				set.byName[t.Name] = t.ID
				set.exposed[t.ID] = t.Name
			} else {
				g.log.Warn("tool name is taken; exposing it with its server prefix", "tool", t.ID)
			}
		}
	}
	g.tools.Store(set)
	if g.cfg.LazyToolList && !g.listBuilt.Load() {
		return nil
	}
	g.registerList(tools, set)
	return nil
}

// registerList hands mcp-go the meta-tools and one tool per catalog tool
// of set (in the order of tools). The caller holds regMu.
func (g *Server) registerList(tools []catalog.Tool, set *toolSet) {
	serverTools := g.metaTools()
	fps := make(map[string]string, len(serverTools)+len(tools))
	for _, st := range serverTools {
		fps[st.Tool.Name] = "meta"
	}
	for _, t := range tools {
		mt, ok := g.listedTool(set, t)
		if !ok {
			continue
		}
		serverTools = append(serverTools, server.ServerTool{Tool: mt, Handler: g.directCallHandler(t.ID)})
		fps[mt.Name] = t.ID + "\x00" + t.ContentHash
	}
	g.register(serverTools, fps)
	g.listBuilt.Store(true)
}

// listedTool is the MCP tool of a catalog tool under its exposed name; ok
// is false for a tool mcp-go cannot list (an invalid x-mcp-header
// annotation: mcp-go panics on it), which run_tool still reaches.
func (g *Server) listedTool(set *toolSet, t catalog.Tool) (mcp.Tool, bool) {
	mt := mcpTool(t)
	g.gatewayToolMeta(&mt, t.Server)
	if name, ok := set.exposed[t.ID]; ok {
		mt.Name = name
	}
	if mayHaveHeaderAnnotations(mt.RawInputSchema) {
		if err := mcp.ValidateParamHeaderAnnotations(&mt); err != nil {
			g.log.Warn("tool cannot be listed by the MCP layer; it stays reachable through run_tool", "tool", t.ID, "error", err)
			return mt, false
		}
	}
	return mt, true
}

// ensureToolList builds the MCP tool list now if Config.LazyToolList
// deferred it (the caller is about to need it).
func (g *Server) ensureToolList() {
	if g.listBuilt.Load() {
		return
	}
	g.regMu.Lock()
	defer g.regMu.Unlock()
	if g.listBuilt.Load() {
		return
	}
	set := g.tools.Load()
	if set == nil {
		return
	}
	tools := make([]catalog.Tool, 0, len(set.byID))
	for _, t := range set.byID {
		tools = append(tools, t)
	}
	slices.SortFunc(tools, func(a, b catalog.Tool) int { return strings.Compare(a.ID, b.ID) })
	g.registerList(tools, set)
}

// register hands the tool list to mcp-go. After the first time only the
// difference is: mcp-go checks every tool it is given (it re-decodes each
// schema, holding its tool lock) and tells every client the list changed,
// so a resync that changed nothing costs nothing, and one that changed a
// few tools costs a few. A changed tool is replaced in place (AddTools), so
// it stays callable throughout; the gateway validates arguments itself,
// and mcp-go's own input validation, whose cache AddTools would not
// refresh, is not enabled.
func (g *Server) register(all []server.ServerTool, fps map[string]string) {
	defer g.broadcast() // mcp-go tells every session the list changed
	if g.registered == nil {
		g.srv.SetTools(all...)
		g.registered = fps
		return
	}
	var add []server.ServerTool
	for _, st := range all {
		if g.registered[st.Tool.Name] != fps[st.Tool.Name] {
			add = append(add, st)
		}
	}
	var gone []string
	for name := range g.registered {
		if _, ok := fps[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		g.srv.DeleteTools(gone...)
	}
	if len(add) > 0 {
		g.srv.AddTools(add...)
	}
	g.registered = fps
}

// SetUnprefixed replaces Config.Unprefixed: the servers exposed under
// their original names from the next Reload or ReloadTools on (the runtime
// learns them with the registry).
func (g *Server) SetUnprefixed(servers map[string]bool) {
	g.unprefixed.Store(&servers)
}

// isUnprefixed reports whether server id is exposed under its original
// names.
func (g *Server) isUnprefixed(id string) bool { return (*g.unprefixed.Load())[id] }

// mayHaveHeaderAnnotations reports whether a raw input schema can carry an
// x-mcp-header annotation: its name must appear in the text, or hide behind
// a JSON escape. Validating every schema (a full re-decode) took most of a
// reload's time at 10k tools; only these few need it.
func mayHaveHeaderAnnotations(raw json.RawMessage) bool {
	return bytes.Contains(raw, []byte("x-mcp-header")) || bytes.Contains(raw, []byte(`\u`))
}

// CatalogCounts reports how many catalog tools the last Reload loaded and
// how many of them are stale (their server was unreachable at the last
// sync).
func (g *Server) CatalogCounts() (tools, stale int) {
	set := g.tools.Load()
	for _, t := range set.byID {
		if t.Status != catalog.StatusActive {
			stale++
		}
	}
	return len(set.byID), stale
}

// mcpTool converts a catalog record to the tool advertised under its
// merged name.
func mcpTool(t catalog.Tool) mcp.Tool {
	mt := mcp.Tool{Name: t.ID, Title: t.Title, Description: t.Description}
	if len(t.InputSchema) > 0 {
		mt.RawInputSchema = t.InputSchema
	} else {
		mt.InputSchema = mcp.ToolInputSchema{Type: "object"}
	}
	if len(t.Annotations) > 0 {
		_ = json.Unmarshal(t.Annotations, &mt.Annotations)
	}
	applyExtra(&mt, t.Extra)
	return mt
}

func (g *Server) reloadSurface(ctx context.Context) {
	servers := g.cfg.Upstreams.Servers()
	type result struct {
		id   string
		surf serverSurface
		err  error
	}
	results := make(chan result, len(servers))
	sem := make(chan struct{}, 8)
	for _, id := range servers {
		go func(id string) {
			sem <- struct{}{}
			defer func() { <-sem }()
			if g.cfg.Surfaces != nil {
				s, err := g.storedSurface(ctx, id)
				results <- result{id: id, surf: s, err: err}
				return
			}
			lctx, cancel := context.WithTimeout(ctx, g.cfg.UpstreamListTimeout)
			defer cancel()
			var s serverSurface
			var errs []error
			var err error
			if s.prompts, err = g.cfg.Upstreams.ListPrompts(lctx, id); err != nil {
				errs = append(errs, err)
			}
			if s.resources, err = g.cfg.Upstreams.ListResources(lctx, id); err != nil {
				errs = append(errs, err)
			}
			if s.templates, err = g.cfg.Upstreams.ListResourceTemplates(lctx, id); err != nil {
				errs = append(errs, err)
			}
			results <- result{id: id, surf: s, err: errors.Join(errs...)}
		}(id)
	}
	g.surfMu.Lock()
	defer g.surfMu.Unlock()
	next := map[string]serverSurface{}
	for range servers {
		r := <-results
		if r.err != nil && !allUnsupported(r.err) {
			g.log.Warn("could not list prompts/resources; keeping the previous ones", "server", r.id, "error", r.err)
			if old, ok := g.surface[r.id]; ok {
				next[r.id] = old
				continue
			}
		}
		next[r.id] = r.surf
	}
	g.capSurfaces(next)
	g.surface = next

	var prompts []server.ServerPrompt
	var resources []server.ServerResource
	var templates []server.ServerResourceTemplate
	names := &surfaceNames{prompts: map[string]origin{}, resources: map[string]origin{}, exposedTemplates: map[string]origin{}}
	ids := make([]string, 0, len(next))
	for id := range next {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	// Prefixed names first, so an unprefixed name never shadows one.
	for _, id := range ids {
		for _, p := range next[id].prompts {
			names.prompts[catalog.ToolID(id, p.Name)] = origin{id, p.Name}
		}
	}
	for _, id := range ids {
		s := next[id]
		plain := g.isUnprefixed(id)
		for _, p := range s.prompts {
			mp := p
			mp.Name = catalog.ToolID(id, p.Name)
			if _, taken := names.prompts[p.Name]; plain && !taken && !strings.Contains(p.Name, catalog.Separator) {
				mp.Name = p.Name
				names.prompts[p.Name] = origin{id, p.Name}
			}
			prompts = append(prompts, server.ServerPrompt{Prompt: mp, Handler: g.promptHandler(id, p.Name)})
		}
		for _, r := range s.resources {
			mr := r
			mr.URI = GatewayURI(id, r.URI)
			canon, err := policy.CanonicalURI(r.URI)
			if err != nil {
				g.log.Warn("resource not exposed: its URI cannot be made canonical", "server", id, "error", err)
				continue
			}
			if _, taken := names.resources[canon]; plain && !taken && !strings.HasPrefix(r.URI, "gateway://") && !claimsServer(r.URI, next) {
				mr.URI = r.URI
				names.resources[canon] = origin{id, canon}
			}
			resources = append(resources, server.ServerResource{Resource: mr, Handler: g.resourceHandler()})
		}
		for _, t := range s.templates {
			if t.URITemplate == nil {
				continue
			}
			mt := t
			mt.URITemplate = mustTemplate(GatewayURI(id, t.URITemplate.Raw()))
			if plain && !strings.HasPrefix(t.URITemplate.Raw(), "gateway://") {
				mt.URITemplate = t.URITemplate
				names.templates = append(names.templates, unprefixedTemplate{server: id, tmpl: t.URITemplate})
			}
			if mt.URITemplate == nil {
				continue
			}
			names.exposedTemplates[mt.URITemplate.Raw()] = origin{id, t.URITemplate.Raw()}
			templates = append(templates, server.ServerResourceTemplate{Template: mt, Handler: server.ResourceTemplateHandlerFunc(g.resourceHandler())})
		}
	}
	// One unlisted catch-all template lets clients read any resource URI of
	// an upstream (resources/read of dynamic URIs). It covers every
	// gateway:// URI, not one prefix per server, so that a URI of an
	// ungranted server gets the same "resource not found" answer from the
	// resource handler as a URI of a server that does not exist.
	for _, raw := range []string{"gateway://{+uri}", uiScheme + "{+uri}"} {
		if ct := mustTemplate(raw); ct != nil {
			templates = append(templates, server.ServerResourceTemplate{
				Template: mcp.ResourceTemplate{URITemplate: ct, Name: catchAllName},
				Handler:  server.ResourceTemplateHandlerFunc(g.resourceHandler()),
			})
		}
	}
	g.surfNames.Store(names)
	g.srv.SetPrompts(prompts...)
	g.srv.SetResources(resources...)
	g.srv.SetResourceTemplates(templates...)
	g.broadcast()
}

const catchAllName = "__gateway_catch_all__"

// allUnsupported reports whether every joined error says the upstream does
// not implement the capability (method not found), which is not a failure.
func allUnsupported(err error) bool {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		if !isMethodNotFound(e) {
			return false
		}
	}
	return true
}
