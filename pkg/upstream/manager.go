package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// ServerInfo is what an upstream said about itself when the session started.
type ServerInfo struct {
	Name, Title, Version, Instructions string
	ProtocolVersion                    string
	Capabilities                       mcp.ServerCapabilities
	// Implementation is the serverInfo the server sent (name, version,
	// title, description, icons, websiteUrl).
	Implementation mcp.Implementation
}

// callFunc runs one MCP request on a ready client.
type callFunc func(ctx context.Context, c *client.Client) error

// backend is how one server is reached: a stdio process pool or an HTTP session.
type backend interface {
	do(ctx context.Context, op string, idempotent bool, timeout time.Duration, fn callFunc) error
	serverInfo() (ServerInfo, bool)
	reap(now time.Time) // stop what has been idle for too long
	stop()              // stop everything; blocks until done
}

// Manager reaches every configured upstream server. It is safe for
// concurrent use, including SetServers while calls run.
type Manager struct {
	opts Options
	log  *slog.Logger
	http http.RoundTripper // shared by every HTTP upstream

	mu       sync.RWMutex
	servers  map[string]*server
	health   HealthView // SetHealthView
	closed   bool
	retiring sync.WaitGroup
	stopping chan struct{} // closed by Close

	janitorDone chan struct{}
	catalogCred atomic.Pointer[CatalogCredential] // principal.go

	relayStats
}

// server is one configured upstream.
type server struct {
	id      string
	cfg     ServerConfig
	b       backend
	timeout time.Duration
	slots   chan struct{}
	pp      principals // per-principal connections (principal.go)
	brk     breaker

	mu      sync.Mutex
	active  int
	retired bool
	idle    chan struct{} // closed when retired and no call is active
}

// upstreamIdleConnTimeout retires a pooled connection to an HTTP upstream
// before the server does: Node's http server (keepAliveTimeout) and
// uvicorn close idle keep-alive connections after 5s, and a request sent
// on a connection the server is closing fails with EOF; net/http does not
// resend a POST. A new connection to a nearby server costs far less than a
// lost tools/call.
const upstreamIdleConnTimeout = 4 * time.Second

// NewManager returns a Manager with no servers; call SetServers.
func NewManager(opts Options) *Manager {
	opts = opts.withDefaults()
	base := http.DefaultTransport.(*http.Transport).Clone()
	base.MaxIdleConns = 256
	base.MaxIdleConnsPerHost = opts.MaxConcurrentPerServer + 4
	base.IdleConnTimeout = upstreamIdleConnTimeout
	base.DialContext = (&net.Dialer{Timeout: opts.ConnectTimeout, KeepAlive: 30 * time.Second}).DialContext
	m := &Manager{
		opts:     opts,
		log:      opts.Logger,
		http:     base,
		servers:  map[string]*server{},
		stopping: make(chan struct{}),
	}
	if opts.IdleTimeout > 0 {
		m.janitorDone = make(chan struct{})
		go m.janitor()
	}
	return m
}

// janitor stops idle stdio processes.
func (m *Manager) janitor() {
	defer close(m.janitorDone)
	every := min(max(m.opts.IdleTimeout/4, 10*time.Millisecond), 30*time.Second)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-m.stopping:
			return
		case now := <-t.C:
			m.mu.RLock()
			list := m.serverList()
			m.mu.RUnlock()
			for _, s := range list {
				s.b.reap(now)
				s.reapPrincipals(now, m.opts.IdleTimeout)
			}
		}
	}
}

// SetServers makes cfgs the configured servers: new ids are added, changed
// ones are replaced (calls already running finish on the old connection,
// which is then stopped), ids not in cfgs are stopped the same way. A config
// that does not validate is kept, and every call to it fails with its error.
func (m *Manager) SetServers(cfgs map[string]ServerConfig) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	for id, cfg := range cfgs {
		if old, ok := m.servers[id]; ok {
			if old.cfg.equal(cfg) {
				continue
			}
			m.retire(old)
		}
		m.servers[id] = m.newServer(id, cfg)
	}
	for id, old := range m.servers {
		if _, ok := cfgs[id]; !ok {
			m.retire(old)
			delete(m.servers, id)
		}
	}
}

func (m *Manager) newServer(id string, cfg ServerConfig) *server {
	cfg = cloneConfig(cfg)
	s := &server{id: id, cfg: cfg, timeout: m.opts.CallTimeout, slots: make(chan struct{}, m.opts.MaxConcurrentPerServer), idle: make(chan struct{})}
	if cfg.Timeout > 0 {
		s.timeout = cfg.Timeout
	}
	if err := cfg.Validate(); err != nil {
		s.b = brokenBackend{newProblem(ErrUnavailable, err, "the server is misconfigured: %v", err)}
		return s
	}
	if cfg.Transport == TransportStdio {
		s.b = newStdioPool(id, cfg, &m.opts, m.log, m)
	} else {
		s.b = newHTTPBackend(id, cfg, &m.opts, m.log, tracing.Transport(m.http), m)
	}
	return s
}

// retire lets the calls running on s finish, then stops it. m.mu is held.
func (m *Manager) retire(s *server) {
	s.mu.Lock()
	s.retired = true
	if s.active == 0 {
		close(s.idle)
	}
	s.mu.Unlock()
	m.retiring.Go(func() {
		grace := time.NewTimer(s.timeout + m.opts.ConnectTimeout)
		defer grace.Stop()
		select {
		case <-s.idle:
		case <-grace.C:
		case <-m.stopping:
		}
		s.stop()
	})
}

// begin registers a call on server id.
func (m *Manager) begin(id string) (*server, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.closed {
		return nil, newProblem(ErrUnavailable, nil, "the gateway is shutting down")
	}
	s, ok := m.servers[id]
	if !ok {
		return nil, ErrUnknownServer
	}
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	return s, nil
}

// stop ends s's shared connection or processes and its principals' own
// connections.
func (s *server) stop() {
	s.b.stop()
	s.stopPrincipals()
}

func (s *server) end() {
	s.mu.Lock()
	s.active--
	if s.active == 0 && s.retired {
		close(s.idle)
	}
	s.mu.Unlock()
}

// call runs fn on server id with the slot limit, timeout and error wording;
// a server known to be down is answered at once (breaker).
func (m *Manager) call(ctx context.Context, id, op string, idempotent bool, fn callFunc) error {
	return m.run(ctx, id, op, idempotent, false, fn)
}

// run is call; a health check is never held back by the breaker, and its
// outcome counts like any call's.
func (m *Manager) run(ctx context.Context, id, op string, idempotent, healthCheck bool, fn callFunc) (err error) {
	s, err := m.begin(id)
	if err != nil {
		return &Error{Server: id, Op: op, Err: err}
	}
	defer s.end()
	ctx, span := startCall(ctx, s, op)
	defer func() { endCall(span, err) }()
	// The breaker holds back tool calls to HTTP upstreams: a stdio server
	// has its own restart back-off, and list requests (the sync) must find
	// out for themselves that a server is back.
	probe := false
	if !healthCheck && op == string(mcp.MethodToolsCall) && s.cfg.Transport != TransportStdio && s.cfg.URL != "" {
		if probe, err = s.brk.admit(time.Now(), m.healthView(), id); err != nil {
			return &Error{Server: id, Op: op, Err: err}
		}
	}
	if err := s.acquireSlot(ctx); err != nil {
		s.brk.done(time.Now(), probe, err) // says nothing about the server
		return &Error{Server: id, Op: op, Err: err}
	}
	defer func() { <-s.slots }()
	err = m.backendFor(ctx, s).do(ctx, op, idempotent, s.timeout, fn)
	s.brk.done(time.Now(), probe, err)
	if err != nil {
		return &Error{Server: id, Op: op, Err: err}
	}
	return nil
}

// acquireSlot waits for one of the MaxConcurrentPerServer call slots, at
// most the call timeout.
func (s *server) acquireSlot(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	wait := startStage(ctx, "pool wait")
	defer wait.End()
	t := time.NewTimer(s.timeout)
	defer t.Stop()
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-t.C:
		return &problem{msg: fmt.Sprintf("did not get a call slot within %s: all %d slots of this server stayed busy (MaxConcurrentPerServer)", fmtDuration(s.timeout), cap(s.slots)),
			kind: context.DeadlineExceeded, predicate: true}
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return &problem{msg: "did not answer before the caller's deadline (waiting for a free call slot)", kind: context.DeadlineExceeded, predicate: true}
		}
		return &problem{msg: "was canceled by the caller while waiting for a free call slot", kind: context.Canceled, predicate: true}
	}
}

// Unprefixed returns the configured servers whose config says
// unprefixed: true (a gateway option this package only carries).
func (m *Manager) Unprefixed() map[string]bool {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := map[string]bool{}
	for id, s := range m.servers {
		if s.cfg.Unprefixed {
			out[id] = true
		}
	}
	return out
}

// Servers returns the configured server ids, sorted.
func (m *Manager) Servers() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	ids := make([]string, 0, len(m.servers))
	for id := range m.servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// Info returns what server id said about itself at initialize, connecting
// (starting a process) first if it has not been reached yet.
func (m *Manager) Info(ctx context.Context, id string) (ServerInfo, error) {
	m.mu.RLock()
	s, ok := m.servers[id]
	m.mu.RUnlock()
	if ok {
		if info, ok := m.backendFor(ctx, s).serverInfo(); ok {
			return info, nil
		}
	}
	if err := m.call(ctx, id, "initialize", true, func(context.Context, *client.Client) error { return nil }); err != nil {
		return ServerInfo{}, err
	}
	m.mu.RLock()
	s, ok = m.servers[id]
	m.mu.RUnlock()
	if ok {
		if info, ok := m.backendFor(ctx, s).serverInfo(); ok {
			return info, nil
		}
	}
	return ServerInfo{}, &Error{Server: id, Op: "initialize", Err: newProblem(ErrUnavailable, nil, "the server was replaced while connecting")}
}

// ListTools returns every tool of server id, following pagination cursors
// up to Options.MaxListTools tools and MaxListPages pages. Beyond either,
// or on a cursor the server already sent, it stops and returns the tools
// it kept with an *Error matching ErrListTruncated. A server that does not
// declare the tools capability has none.
func (m *Manager) ListTools(ctx context.Context, id string) ([]mcp.Tool, error) {
	var out []mcp.Tool
	var truncated string
	err := m.call(ctx, id, string(mcp.MethodToolsList), true, func(ctx context.Context, c *client.Client) error {
		out, truncated = nil, "" // a retried call starts over
		if c.GetServerCapabilities().Tools == nil {
			return nil
		}
		req := mcp.ListToolsRequest{}
		seen := map[mcp.Cursor]bool{}
		for page := 1; ; page++ {
			res, err := c.ListToolsByPage(ctx, req)
			if err != nil {
				return err
			}
			if sc := statelessFrom(ctx); sc != nil {
				sc.NoteTools(res.Tools, page == 1)
			}
			if room := m.opts.MaxListTools - len(out); len(res.Tools) > room {
				out = append(out, res.Tools[:room]...)
				truncated = fmt.Sprintf("it lists more than %d tools (TOOL_RAG_MAX_TOOLS_PER_SERVER); only the first %d are served", m.opts.MaxListTools, m.opts.MaxListTools)
				return nil
			}
			out = append(out, res.Tools...)
			switch {
			case res.NextCursor == "":
				return nil
			case seen[res.NextCursor]:
				truncated = fmt.Sprintf("its tools/list pagination repeats a cursor after %d pages; the %d tools listed so far are served", page, len(out))
				return nil
			case page >= m.opts.MaxListPages:
				truncated = fmt.Sprintf("its tools/list has more than %d pages (TOOL_RAG_MAX_TOOL_PAGES); the %d tools of the first %d are served", m.opts.MaxListPages, len(out), page)
				return nil
			}
			seen[res.NextCursor] = true
			req.Params.Cursor = res.NextCursor
		}
	})
	if err == nil && truncated != "" {
		err = &Error{Server: id, Op: string(mcp.MethodToolsList), Err: &problem{msg: "was cut short: " + truncated, kind: ErrListTruncated, predicate: true}}
	}
	return out, err
}

// CallTool calls tool name on server id. A tool that fails returns a result
// with IsError set and a nil error; the error is for failures to get an
// answer at all.
func (m *Manager) CallTool(ctx context.Context, id, name string, args map[string]any) (*mcp.CallToolResult, error) {
	var out *mcp.CallToolResult
	err := m.call(withTarget(ctx, name), id, string(mcp.MethodToolsCall), false, func(ctx context.Context, c *client.Client) error {
		req := mcp.CallToolRequest{}
		req.Params.Name = name
		if args != nil {
			req.Params.Arguments = args
		}
		defer withProgressToken(ctx, &req)()
		withLogLevel(ctx, &req.Params.Meta)
		tracing.UpstreamMeta(ctx, &req.Params.Meta)
		var res *mcp.CallToolResult
		var err error
		rt := roundTripFrom(ctx)
		if sc := statelessFrom(ctx); sc != nil {
			if rt != nil {
				req.Params.MultiRoundTripParams = mcp.MultiRoundTripParams{InputResponses: rt.Responses, RequestState: rt.State}
			}
			res, err = sc.CallTool(ctx, c, req, rt.caps(), rt != nil)
		} else {
			res, err = c.CallTool(ctx, req)
		}
		out = res
		linger(ctx)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// ListPrompts returns every prompt of server id (none if it does not
// declare the prompts capability).
func (m *Manager) ListPrompts(ctx context.Context, id string) ([]mcp.Prompt, error) {
	return ask(ctx, m, id, mcp.MethodPromptsList, true, func(ctx context.Context, c *client.Client) ([]mcp.Prompt, error) {
		if c.GetServerCapabilities().Prompts == nil {
			return nil, nil
		}
		res, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		return field(res, err, func(r *mcp.ListPromptsResult) []mcp.Prompt { return r.Prompts })
	})
}

// GetPrompt renders prompt name of server id with args.
func (m *Manager) GetPrompt(ctx context.Context, id, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return ask(ctx, m, id, mcp.MethodPromptsGet, true, func(ctx context.Context, c *client.Client) (*mcp.GetPromptResult, error) {
		req := mcp.GetPromptRequest{}
		req.Params.Name = name
		req.Params.Arguments = args
		withLogLevel(ctx, &req.Params.Meta)
		defer linger(ctx)
		return c.GetPrompt(ctx, req)
	})
}

// ListResources returns every resource of server id (none if it does not
// declare the resources capability).
func (m *Manager) ListResources(ctx context.Context, id string) ([]mcp.Resource, error) {
	return ask(ctx, m, id, mcp.MethodResourcesList, true, func(ctx context.Context, c *client.Client) ([]mcp.Resource, error) {
		if c.GetServerCapabilities().Resources == nil {
			return nil, nil
		}
		res, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
		return field(res, err, func(r *mcp.ListResourcesResult) []mcp.Resource { return r.Resources })
	})
}

// ListResourceTemplates returns every resource template of server id.
func (m *Manager) ListResourceTemplates(ctx context.Context, id string) ([]mcp.ResourceTemplate, error) {
	return ask(ctx, m, id, mcp.MethodResourcesTemplatesList, true, func(ctx context.Context, c *client.Client) ([]mcp.ResourceTemplate, error) {
		if c.GetServerCapabilities().Resources == nil {
			return nil, nil
		}
		res, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		return field(res, err, func(r *mcp.ListResourceTemplatesResult) []mcp.ResourceTemplate { return r.ResourceTemplates })
	})
}

// ReadResource reads uri from server id.
func (m *Manager) ReadResource(ctx context.Context, id, uri string) (*mcp.ReadResourceResult, error) {
	return ask(ctx, m, id, mcp.MethodResourcesRead, true, func(ctx context.Context, c *client.Client) (*mcp.ReadResourceResult, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		withLogLevel(ctx, &req.Params.Meta)
		defer linger(ctx)
		return c.ReadResource(ctx, req)
	})
}

// ask runs fn on server id's connection through m.call (retried when
// idempotent) and returns its answer, or the error and the zero T.
func ask[T any](ctx context.Context, m *Manager, id string, method mcp.MCPMethod, idempotent bool, fn func(context.Context, *client.Client) (T, error)) (T, error) {
	var out T
	err := m.call(ctx, id, string(method), idempotent, func(ctx context.Context, c *client.Client) error {
		var err error
		out, err = fn(ctx, c)
		return err
	})
	if err != nil {
		var zero T
		return zero, err
	}
	return out, nil
}

// field picks the list of a list answer, when there is one.
func field[R, T any](res R, err error, list func(R) T) (T, error) {
	if err != nil {
		var zero T
		return zero, err
	}
	return list(res), nil
}

// Complete asks server id for completions of a prompt or resource template
// argument; req's ref names the prompt or template as the server knows it.
// A server that does not declare the completions capability has none (an
// empty list, not an error).
func (m *Manager) Complete(ctx context.Context, id string, req mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	var out *mcp.CompleteResult
	err := m.call(ctx, id, string(mcp.MethodCompletionComplete), true, func(ctx context.Context, c *client.Client) error {
		if c.GetServerCapabilities().Completions == nil {
			out = &mcp.CompleteResult{Completion: mcp.Completion{Values: []string{}}}
			return nil
		}
		res, err := c.Complete(ctx, req)
		out = res
		return err
	})
	if err != nil {
		return nil, err
	}
	if out.Completion.Values == nil {
		out.Completion.Values = []string{}
	}
	return out, nil
}

// Subscribe asks server id for notifications/resources/updated about uri
// (see OnResourceUpdated). A server that does not declare resource
// subscriptions answers with an error. On a 2026-07-28 connection the
// subscription is a URI in the filter of the connection's one
// subscriptions/listen stream (listen.go), acknowledged by the server
// before Subscribe returns; an earlier protocol gets resources/subscribe.
// Either way it lives on one connection (on a stdio server, one of its
// processes) and ends with it.
func (m *Manager) Subscribe(ctx context.Context, id, uri string) error {
	return m.call(ctx, id, string(mcp.MethodResourcesSubscribe), true, func(ctx context.Context, c *client.Client) error {
		if r := c.GetServerCapabilities().Resources; r == nil || !r.Subscribe {
			return newProblem(nil, nil, "the server does not support resource subscriptions")
		}
		if mcp.IsModernProtocol(c.ProtocolVersion()) {
			return listenSubscribe(ctx, c, uri)
		}
		return legacySubscribe(ctx, c, uri)
	})
}

// Unsubscribe ends a subscription made with Subscribe.
func (m *Manager) Unsubscribe(ctx context.Context, id, uri string) error {
	return m.call(ctx, id, string(mcp.MethodResourcesUnsubscribe), true, func(ctx context.Context, c *client.Client) error {
		if r := c.GetServerCapabilities().Resources; r == nil || !r.Subscribe {
			return nil
		}
		if mcp.IsModernProtocol(c.ProtocolVersion()) {
			return listenUnsubscribe(ctx, c, uri)
		}
		return legacyUnsubscribe(ctx, c, uri)
	})
}

// Ping checks that server id answers: a ping (server/discover on the
// 2026-07-28 protocol, which dropped ping) over the pool or session,
// starting a process or opening a session if needed.
func (m *Manager) Ping(ctx context.Context, id string) error {
	return m.run(ctx, id, string(mcp.MethodPing), true, true, func(ctx context.Context, c *client.Client) error {
		if mcp.IsModernProtocol(c.ProtocolVersion()) {
			_, err := c.Discover(ctx, mcp.DiscoverRequest{})
			return err
		}
		return legacyPing(ctx, c)
	})
}

// serverList returns the servers registered now, so the caller can work on
// them after releasing m.mu. The caller holds m.mu.
func (m *Manager) serverList() []*server {
	list := make([]*server, 0, len(m.servers))
	for _, s := range m.servers {
		list = append(list, s)
	}
	return list
}

// Close stops every server (processes are killed with their process group
// and reaped) and waits for them. Calls still running fail.
func (m *Manager) Close() error {
	m.mu.Lock()
	if m.closed {
		m.mu.Unlock()
		return nil
	}
	m.closed = true
	close(m.stopping)
	list := m.serverList()
	m.servers = map[string]*server{}
	m.mu.Unlock()

	var wg sync.WaitGroup
	for _, s := range list {
		wg.Go(s.stop)
	}
	wg.Wait()
	m.retiring.Wait()
	if m.janitorDone != nil {
		<-m.janitorDone
	}
	if t, ok := m.http.(*http.Transport); ok {
		t.CloseIdleConnections()
	}
	return nil
}

// brokenBackend fails every call with a configuration problem.
type brokenBackend struct{ p *problem }

func (b brokenBackend) do(context.Context, string, bool, time.Duration, callFunc) error { return b.p }
func (b brokenBackend) serverInfo() (ServerInfo, bool)                                  { return ServerInfo{}, false }
func (b brokenBackend) reap(time.Time)                                                  {}
func (b brokenBackend) stop()                                                           {}

func initializeRequest() mcp.InitializeRequest {
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "toolrag-mcp-gateway", Version: "1"}
	req.Params.Capabilities.Extensions = Extensions()
	return req
}

func serverInfo(res *mcp.InitializeResult, c *client.Client) ServerInfo {
	return ServerInfo{
		Name:            res.ServerInfo.Name,
		Title:           res.ServerInfo.Title,
		Version:         res.ServerInfo.Version,
		Instructions:    res.Instructions,
		ProtocolVersion: c.ProtocolVersion(),
		Capabilities:    res.Capabilities,
		Implementation:  res.ServerInfo,
	}
}

// describeAnswer words a failure where the server did answer: a JSON-RPC
// error (its own, or one the frame guard made up), or a result the client
// could not use. It returns nil when nothing usable came back (a transport
// failure, which the backend words).
func describeAnswer(op string, err error, st *callState, limit int64) *problem {
	var p *problem
	if errors.As(err, &p) {
		return p
	}
	var re *RelayError
	if errors.As(err, &re) {
		return newProblem(nil, err, "%v", re)
	}
	if n := st.tooLarge.Load(); n != 0 {
		return tooLarge(max(n, 0), limit)
	}
	if st.rpcErr != nil {
		if gp, ok := guardError(st.rpcErr.Message, limit); ok {
			return gp
		}
		msg := st.rpcErr.Message
		if msg == "" {
			msg = "(no message)"
		}
		return newProblem(nil, newRPCError(st.rpcErr, err), "the server answered with error %d: %s", st.rpcErr.Code, msg)
	}
	if st.sendErr != nil || !st.answered {
		return nil
	}
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	if errors.As(err, &se) || errors.As(err, &te) {
		return newProblem(ErrInvalidResponse, err, "the server's answer is not a valid %s result: %v", op, err)
	}
	return newProblem(ErrInvalidResponse, err, "the server's answer could not be used: %v", err)
}

func cloneConfig(c ServerConfig) ServerConfig {
	c.Args = append([]string(nil), c.Args...)
	if c.Env != nil {
		env := make(map[string]string, len(c.Env))
		for k, v := range c.Env {
			env[k] = v
		}
		c.Env = env
	}
	if c.Auth != nil {
		a := *c.Auth
		a.Scopes = append([]string(nil), a.Scopes...)
		c.Auth = &a
	}
	if c.Headers != nil {
		h := make(map[string]string, len(c.Headers))
		for k, v := range c.Headers {
			h[k] = v
		}
		c.Headers = h
	}
	return c
}
