package gateway

// The gateway's own answer to tools/call over Streamable HTTP (issue 16).
//
// mcp-go's StreamableHTTPServer decodes a POST body six more times after
// the gateway's HTTP handler has read it (the transport's probe and era
// detection; HandleMessage's dispatch header, protocol info and trace
// _meta; the typed request), starts a notification forwarder goroutine with its channels for
// every request, and encodes the result through its generic dispatcher.
// For the dominant request, a tools/call on an established session or a
// stateless 2026-07-28 request, fastCall does the same work once: the
// handler has already decoded the body (readHead), the tool's registered
// handler runs with the same context values, behind the same checks (the
// session's owner, mcp-go's tool filter, which is the gateway's policy,
// then the handler's own policy, schema, rate, audit and metrics code), and
// the response is encoded with mcp-go's types, byte for byte what mcp-go
// writes (TestFastCallSameBytes compares the two for a table of requests).
//
// Anything it does not reproduce goes to mcp-go unchanged: batches,
// notifications and responses, other methods, a progress token, any _meta
// on a legacy request or an unknown _meta key on a modern one, tasks and
// multi round-trip retries, a session not registered on this instance or
// whose client declared sampling or elicitation (they are asked on the
// request's own SSE stream, which only mcp-go keeps), pending notifications
// on the session, a tool with x-mcp-header parameters (modern), a request
// mcp-go would reject at the transport (content type, protocol version
// headers, DNS rebinding), and a response writer that cannot stream.
//
// Two kinds of session state live inside mcp-go and cannot be read:
//
//   - whether a session's POSTs are answered as SSE (mcp-go switches a
//     session to SSE for good once any notification reaches it). The
//     gateway follows it: a session is served here only after mcp-go has
//     answered one of its requests with plain JSON and no broadcast has
//     happened since (notifyGen), or once it is known to be switched (an SSE
//     answer, or a notification sent during a call here), in which case the
//     answer is written as SSE the way mcp-go writes it.
//   - the last activity mcp-go's idle sweeper (server.WithSessionIdleTTL)
//     reads: at least one request of a session every touchEvery goes to
//     mcp-go, which records it.
//
// Notifications sent during a call answered here (an upstream's log
// messages) are written before the result on the request's SSE stream, as
// mcp-go writes them, but when the call ends rather than as they come.
// notifications/cancelled cancels a call answered here (Server.Handler
// looks for it), and still goes to mcp-go for its own requests.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/statelesscall"
)

// touchEvery bounds how long a session is served here without a request
// going to mcp-go, whose idle sweeper must see it active (a variable for
// tests).
var touchEvery = 30 * time.Second

// fastPath is what fastCall needs of one HTTP handler.
type fastPath struct {
	mcp  *server.StreamableHTTPServer
	ids  SessionIDs
	info mcp.Implementation // serverInfo of 2026-07-28 results
	meta statelesscall.MetaDecoder
}

// newFastPath returns the fast path of a handler, or nil when the server
// has hooks it would have to run and does not.
func (g *Server) newFastPath(h *server.StreamableHTTPServer, ids SessionIDs) *fastPath {
	if hk := g.srv.GetHooks(); hk != nil && (len(hk.OnBeforeAny) > 0 || len(hk.OnSuccess) > 0 || len(hk.OnError) > 0 ||
		len(hk.OnBeforeCallTool) > 0 || len(hk.OnAfterCallTool) > 0) {
		return nil
	}
	info, err := statelesscall.ServerInfo(g.srv)
	if err != nil {
		g.log.Warn("tools/call is left to mcp-go", "error", err)
		return nil
	}
	return &fastPath{mcp: h, ids: ids, info: info}
}

// liveSession is a legacy-protocol session registered with mcp-go on this
// instance.
type liveSession struct {
	sess    server.ClientSession
	logging server.SessionWithLogging
	info    server.SessionWithClientInfo
	sse     server.SessionWithStreamableHTTPConfig
	tools   server.SessionWithTools // nil when it has none

	touched  atomic.Int64  // when mcp-go last handled one of its requests (unix ns)
	cleanGen atomic.Uint64 // notifyGen+1 when mcp-go last answered it with plain JSON (0: never)
	upgraded atomic.Bool   // mcp-go answers its POSTs as SSE
}

func (g *Server) sessionRegistered(_ context.Context, s server.ClientSession) {
	l := &liveSession{sess: s}
	var ok1, ok2, ok3 bool
	l.logging, ok1 = s.(server.SessionWithLogging)
	l.info, ok2 = s.(server.SessionWithClientInfo)
	l.sse, ok3 = s.(server.SessionWithStreamableHTTPConfig)
	l.tools, _ = s.(server.SessionWithTools)
	if !ok1 || !ok2 || !ok3 || s.SessionID() == "" {
		return // not a Streamable HTTP session: mcp-go serves it
	}
	l.touched.Store(time.Now().UnixNano())
	g.live.Store(s.SessionID(), l)
}

func (g *Server) sessionUnregistered(_ context.Context, s server.ClientSession) {
	g.live.Delete(s.SessionID())
}

// broadcast records that a notification may have reached every session
// (mcp-go announces list changes to all of them): the sessions are served
// by mcp-go again until it shows how it answers them.
func (g *Server) broadcast() { g.notifyGen.Add(1) }

// observe follows how mcp-go answers a request of a live session: w records
// the answer's framing, and the session's activity is noted.
func (g *Server) observe(w http.ResponseWriter, r *http.Request, head *requestHead) http.ResponseWriter {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return w
	}
	v, ok := g.live.Load(sid)
	if !ok {
		return w
	}
	l := v.(*liveSession)
	l.touched.Store(time.Now().UnixNano())
	f, ok := w.(http.Flusher)
	if !ok || head.Method == "" || len(head.ID) == 0 {
		return w
	}
	return &observeWriter{ResponseWriter: w, Flusher: f, live: l, gen: g.notifyGen.Load()}
}

// observeWriter watches mcp-go's answer to a request of a live session: SSE
// means the session is switched to SSE; a 200 JSON answer means it was not
// when mcp-go wrote it.
type observeWriter struct {
	http.ResponseWriter
	http.Flusher
	live *liveSession
	gen  uint64 // notifyGen before mcp-go handled the request
	seen bool
}

func (w *observeWriter) WriteHeader(code int) {
	w.note(code)
	w.ResponseWriter.WriteHeader(code)
}

func (w *observeWriter) Write(p []byte) (int, error) {
	w.note(http.StatusOK)
	return w.ResponseWriter.Write(p)
}

func (w *observeWriter) Flush() {
	w.note(http.StatusOK)
	w.Flusher.Flush()
}

func (w *observeWriter) note(code int) {
	if w.seen {
		return
	}
	w.seen = true
	switch ct := w.Header().Get("Content-Type"); {
	case ct == "text/event-stream":
		w.live.upgraded.Store(true)
	case ct == "application/json" && code == http.StatusOK:
		w.live.cleanGen.Store(w.gen + 1)
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *observeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// cancelInflight cancels the call answered here that a
// notifications/cancelled names (same principal, same session).
func (g *Server) cancelInflight(r *http.Request, head *requestHead) {
	if len(head.Params.RequestID) == 0 {
		return
	}
	var id any
	if json.Unmarshal(head.Params.RequestID, &id) != nil {
		return
	}
	p := principalOf(r.Context())
	for _, sid := range []string{r.Header.Get(server.HeaderKeySessionID), ""} {
		if c, ok := g.inflight.Load(inflightKey{p, sid, id}); ok {
			c.(context.CancelFunc)()
		}
	}
}

// inflightKey names a call answered by fastCall: its principal, its
// session ("" for a stateless request) and its JSON-RPC id (float64 or
// string, as decoded).
type inflightKey struct {
	principal, sid string
	id             any
}

// callSession is the client session a call answered here sees: the
// registered session (legacy) or a session of the request alone (modern,
// as mcp-go gives each stateless request), with the request's own
// notification channel, whose content is written before the result.
type callSession struct {
	live *liveSession // nil: a modern request

	mu       sync.Mutex
	ch       chan mcp.JSONRPCNotification
	upgraded bool

	// a modern request's own state
	initialized bool
	clientInfo  mcp.Implementation
	clientCaps  mcp.ClientCapabilities
}

var (
	_ server.SessionWithLogging              = (*callSession)(nil)
	_ server.SessionWithClientInfo           = (*callSession)(nil)
	_ server.SessionWithStreamableHTTPConfig = (*callSession)(nil)
)

func (s *callSession) Initialize() {
	if s.live != nil {
		s.live.sess.Initialize()
		return
	}
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
}

func (s *callSession) Initialized() bool {
	if s.live != nil {
		return s.live.sess.Initialized()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

func (s *callSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan mcp.JSONRPCNotification, 100) // as mcp-go's
	}
	return s.ch
}

func (s *callSession) SessionID() string {
	if s.live != nil {
		return s.live.sess.SessionID()
	}
	return ""
}

func (s *callSession) SetLogLevel(level mcp.LoggingLevel) {
	if s.live != nil {
		s.live.logging.SetLogLevel(level)
	}
}

func (s *callSession) GetLogLevel() mcp.LoggingLevel {
	if s.live != nil {
		return s.live.logging.GetLogLevel()
	}
	return mcp.LoggingLevelError // mcp-go's default; a modern request's level is in its _meta
}

func (s *callSession) GetClientInfo() mcp.Implementation {
	if s.live != nil {
		return s.live.info.GetClientInfo()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientInfo
}

func (s *callSession) SetClientInfo(ci mcp.Implementation) {
	if s.live != nil {
		s.live.info.SetClientInfo(ci)
		return
	}
	s.mu.Lock()
	s.clientInfo = ci
	s.mu.Unlock()
}

func (s *callSession) GetClientCapabilities() mcp.ClientCapabilities {
	if s.live != nil {
		return s.live.info.GetClientCapabilities()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps
}

func (s *callSession) SetClientCapabilities(cc mcp.ClientCapabilities) {
	if s.live != nil {
		s.live.info.SetClientCapabilities(cc)
		return
	}
	s.mu.Lock()
	s.clientCaps = cc
	s.mu.Unlock()
}

// UpgradeToSSEWhenReceiveNotification is what mcp-go calls on a session it
// sends a notification to: the registered session is switched as mcp-go
// would switch it, and this answer is written as SSE.
func (s *callSession) UpgradeToSSEWhenReceiveNotification() {
	s.mu.Lock()
	s.upgraded = true
	s.mu.Unlock()
	if s.live != nil {
		s.live.sse.UpgradeToSSEWhenReceiveNotification()
		s.live.upgraded.Store(true)
	}
}

// drain returns the notifications sent during the call and whether the
// answer goes out as SSE.
func (s *callSession) drain() ([]mcp.JSONRPCNotification, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []mcp.JSONRPCNotification
	for more := s.ch != nil; more; {
		select {
		case n := <-s.ch:
			out = append(out, n)
		default:
			more = false
		}
	}
	return out, s.upgraded || len(out) > 0 || (s.live != nil && s.live.upgraded.Load())
}

// fastCall answers the tools/call POST r (body already read, head decoded
// from it) and reports true, or reports false having written nothing, for
// mcp-go to answer.
func (g *Server) fastCall(w http.ResponseWriter, r *http.Request, body []byte, head *requestHead, fp *fastPath) bool {
	p := &head.Params
	if head.Method != string(mcp.MethodToolsCall) || head.JSONRPC != mcp.JSONRPC_VERSION || p.Name == nil ||
		len(head.Result) > 0 || len(head.Error) > 0 || len(p.Task) > 0 || len(p.InputResponses) > 0 || len(p.RequestState) > 0 {
		return false
	}
	flusher, canStream := w.(http.Flusher)
	if !canStream || r.Header.Get("Content-Type") != "application/json" || dnsRebinding(r) {
		return false
	}
	id, ok := requestIDOf(head.ID)
	if !ok {
		return false
	}
	name := *p.Name
	ctx := r.Context()
	principal := principalOf(ctx)
	hv := r.Header.Get(mcp.HeaderProtocolVersion)
	sess := &callSession{}
	var info *server.RequestProtocolInfo
	var meta *mcp.Meta
	var sid string
	if len(p.Meta) == 0 {
		// A legacy request on an established session.
		if mcp.IsModernProtocol(hv) || (hv != "" && !mcp.IsValidProtocolVersion(hv)) {
			return false
		}
		if sid = r.Header.Get(server.HeaderKeySessionID); sid == "" {
			return false
		}
		v, ok := g.live.Load(sid)
		if !ok {
			return false
		}
		l := v.(*liveSession)
		if !l.upgraded.Load() && l.cleanGen.Load() != g.notifyGen.Load()+1 {
			return false // a broadcast may have switched it to SSE: mcp-go shows how
		}
		if time.Now().UnixNano()-l.touched.Load() > int64(touchEvery) || len(l.sess.NotificationChannel()) > 0 {
			return false
		}
		if caps := l.info.GetClientCapabilities(); caps.Sampling != nil || caps.Elicitation != nil {
			return false
		}
		if l.tools != nil {
			if _, shadowed := l.tools.GetSessionTools()[name]; shadowed {
				return false
			}
		}
		// mcp-go checks the session's owner on every POST.
		if _, err := fp.ids.For(principal).Validate(sid); err != nil {
			w.Header().Set("Content-Type", "text/plain; charset=utf-8")
			w.Header().Set("X-Content-Type-Options", "nosniff")
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte("Invalid session ID\n"))
			return true
		}
		sess.live = l
		info = &server.RequestProtocolInfo{}
	} else {
		// A stateless (2026-07-28) request.
		var raw map[string]json.RawMessage
		if json.Unmarshal(p.Meta, &raw) != nil {
			return false
		}
		info = &server.RequestProtocolInfo{}
		if meta, ok = fp.meta.Decode(raw, info); !ok || meta.ProgressToken != nil {
			return false
		}
		if hv != info.ProtocolVersion || r.Header.Get(mcp.HeaderLastEventID) != "" || !fp.mcp.SupportsProtocolVersion(hv) ||
			r.Header.Get(mcp.HeaderMethod) != string(mcp.MethodToolsCall) {
			return false
		}
		if hn := r.Header.Get(mcp.HeaderName); hn == "" {
			return false
		} else if decoded, ok := mcp.DecodeHeaderValue(hn); !ok || decoded != name {
			return false
		}
		if info.ClientInfo != nil {
			sess.clientInfo = *info.ClientInfo
		}
		sess.clientCaps = *info.ClientCapabilities
		sess.initialized = true
	}
	tool := g.srv.GetTool(name)
	if tool == nil || tool.Handler == nil || tool.Tool.Execution != nil {
		return false
	}
	if info.Modern && hasParamHeaders(&tool.Tool) {
		return false // mcp-go checks the Mcp-Param-* headers against the arguments
	}
	req := mcp.CallToolRequest{
		Request: mcp.Request{Method: string(mcp.MethodToolsCall)},
		Header:  r.Header,
		Params:  mcp.CallToolParams{Name: name, Meta: meta},
	}
	if len(p.Arguments) > 0 {
		req.Params.RawArguments = p.Arguments
		if json.Unmarshal(p.Arguments, &req.Params.Arguments) != nil {
			return false
		}
	}

	g.Metrics.FastCalls.Add(1)
	ctx = withRequestMethod(ctx, head.Method)
	ctx = g.srv.WithContext(ctx, sess)
	var resp mcp.JSONRPCMessage
	for _, hook := range g.srv.GetHooks().OnRequestInitialization {
		if err := hook(ctx, id, json.RawMessage(body)); err != nil {
			resp = rpcError(id, mcp.INVALID_REQUEST, err.Error())
			break
		}
	}
	if resp == nil {
		ctx = server.WithRequestProtocolInfo(ctx, info)
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		key := inflightKey{principal, sid, id}
		g.inflight.Store(key, cancel)
		resp = g.runTool(ctx, id, tool, req, info, fp)
		g.inflight.Delete(key)
		cancel()
	}
	writeAnswer(w, flusher, sess, resp, info.Modern)
	return true
}

// runTool is mcp-go's handleToolCall for a tool fastCall found: the tool
// filter (the caller's policy), the handler behind server.WithRecovery, and
// the response HandleMessage builds.
func (g *Server) runTool(ctx context.Context, id any, tool *server.ServerTool, req mcp.CallToolRequest, info *server.RequestProtocolInfo, fp *fastPath) mcp.JSONRPCMessage {
	name := req.Params.Name
	if filtered := g.filterTools(ctx, []mcp.Tool{tool.Tool}); len(filtered) == 0 || filtered[0].Name != name {
		return rpcError(id, mcp.INVALID_PARAMS, fmt.Errorf("tool '%s' not found: %w", name, server.ErrToolNotFound).Error())
	}
	result, err := recovered(ctx, tool.Handler, req)
	if err == nil && result != nil && !info.Modern && result.NeedsInput() {
		// mcp-go would put the input requests to a legacy client; the
		// gateway's handlers never return them (pkg/upstream resolves an
		// upstream's multi round-trip itself).
		err = errors.New("multi round-trip: the tool asked for input the gateway cannot relay on this path")
	}
	if err != nil {
		var required mcp.URLElicitationRequiredError
		var requiredPtr *mcp.URLElicitationRequiredError
		var upstreamErr *rpcFailure
		switch {
		case info.Modern:
		case errors.As(err, &upstreamErr):
			// an upstream's own error, its data as the upstream sent it
			e := upstreamErr.JSONRPCError()
			e.ID = mcp.NewRequestId(id)
			return e
		case errors.As(err, &required):
			d := required.JSONRPCError().Error
			return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(d.Code, err.Error(), d.Data)}
		case errors.As(err, &requiredPtr) && requiredPtr != nil:
			d := requiredPtr.JSONRPCError().Error
			return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(d.Code, err.Error(), d.Data)}
		}
		return rpcError(id, mcp.INTERNAL_ERROR, err.Error())
	}
	if result == nil {
		return rpcError(id, mcp.INTERNAL_ERROR, fmt.Sprintf("tool '%s' handler returned no result", name))
	}
	if info.Modern {
		// mcp-go's decorateResponse for protocol 2026-07-28.
		if result.GetResultType() == "" {
			result.SetResultType(mcp.ResultTypeComplete)
		}
		if m := result.EnsureResultMeta(); m != nil && m.ServerInfo() == nil {
			m.SetServerInfo(fp.info)
		}
	}
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result)
}

// hasParamHeaders reports whether a tool may annotate parameters with
// x-mcp-header: a raw schema is searched for the word (as registerList
// does), a typed one is asked.
func hasParamHeaders(t *mcp.Tool) bool {
	if len(t.RawInputSchema) > 0 {
		return mayHaveHeaderAnnotations(t.RawInputSchema)
	}
	return len(mcp.ExtractParamHeaderBindings(t)) > 0
}

// recovered runs a tool handler as server.WithRecovery does.
func recovered(ctx context.Context, h server.ToolHandlerFunc, req mcp.CallToolRequest) (result *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic recovered in %s tool handler: %v", req.Params.Name, r)
		}
	}()
	return h(ctx, req)
}

func rpcError(id any, code int, msg string) mcp.JSONRPCMessage {
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, ID: mcp.NewRequestId(id), Error: mcp.NewJSONRPCErrorDetails(code, msg, nil)}
}

// writeAnswer writes resp as mcp-go's StreamableHTTPServer writes the
// answer to a POST: as SSE after the notifications of the call when there
// were any or the session is switched to SSE, else as one JSON document
// (2026-07-28 maps a JSON-RPC error to an HTTP status).
func writeAnswer(w http.ResponseWriter, f http.Flusher, sess *callSession, resp mcp.JSONRPCMessage, modern bool) {
	notes, sse := sess.drain()
	h := w.Header()
	if sse {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		for _, n := range notes {
			writeEvent(w, n)
			f.Flush()
		}
		writeEvent(w, resp)
		f.Flush()
		return
	}
	h.Set("Content-Type", "application/json")
	status := http.StatusOK
	if e, ok := resp.(mcp.JSONRPCError); ok && modern {
		status = httpStatusFor(e.Error.Code)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

func writeEvent(w http.ResponseWriter, msg any) {
	data, err := json.Marshal(msg)
	if err != nil {
		return
	}
	buf := make([]byte, 0, len(data)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

// httpStatusFor is the HTTP status protocol 2026-07-28 gives a JSON-RPC
// error (mcp-go's httpStatusForJSONRPCError).
func httpStatusFor(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// requestIDOf decodes a request id as mcp-go does (a number as float64, or
// a string); anything else is left to mcp-go.
func requestIDOf(raw json.RawMessage) (any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	// raw is one JSON value of a document that decoded: the common forms
	// are read without a decoder, as encoding/json would read them.
	switch c := raw[0]; {
	case c == '"' && len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw):
		return string(raw[1 : len(raw)-1]), true
	case c == '-' || (c >= '0' && c <= '9'):
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return f, true
		}
	}
	var id any
	if json.Unmarshal(raw, &id) != nil {
		return nil, false
	}
	switch id.(type) {
	case float64, string:
		return id, true
	}
	return nil, false
}

// dnsRebinding reports whether mcp-go's DNS rebinding protection could
// refuse r (a loopback connection with a Host that is not): mcp-go answers.
func dnsRebinding(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	return isLoopbackHost(local.String()) && !isLoopbackHost(r.Host)
}

// isLoopbackHost is mcp-go's test of a host or host:port.
func isLoopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
