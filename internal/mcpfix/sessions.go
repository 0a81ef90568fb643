package mcpfix

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Sessions follows the state mcp-go keeps of each legacy-protocol
// Streamable HTTP session and does not export, for a server that answers
// some of their requests itself (pkg/gateway's tools/call path):
//
//   - whether a session's POSTs are answered as SSE (mcp-go switches a
//     session to SSE for good once any notification reaches it). A session
//     is served outside mcp-go only after mcp-go has answered one of its
//     requests with plain JSON and no broadcast has happened since, or once
//     it is known to be switched (an SSE answer, or a notification sent
//     during a call answered outside it), in which case the answer is
//     written as SSE the way mcp-go writes it.
//   - the last activity mcp-go's idle sweeper (server.WithSessionIdleTTL)
//     reads: at least one request of a session every touchEvery must go to
//     mcp-go, which records it.
//
// Register and Unregister are mcp-go's session hooks; the zero value is
// ready to use.
type Sessions struct {
	live      sync.Map // session id → *LiveSession
	notifyGen atomic.Uint64
}

// LiveSession is a legacy-protocol session registered with mcp-go on this
// instance.
type LiveSession struct {
	sess    server.ClientSession
	logging server.SessionWithLogging
	info    server.SessionWithClientInfo
	sse     server.SessionWithStreamableHTTPConfig
	tools   server.SessionWithTools // nil when it has none

	touched  atomic.Int64  // when mcp-go last handled one of its requests (unix ns)
	cleanGen atomic.Uint64 // notifyGen+1 when mcp-go last answered it with plain JSON (0: never)
	upgraded atomic.Bool   // mcp-go answers its POSTs as SSE
}

// Register is mcp-go's OnRegisterSession hook.
func (s *Sessions) Register(_ context.Context, cs server.ClientSession) {
	l := &LiveSession{sess: cs}
	var ok1, ok2, ok3 bool
	l.logging, ok1 = cs.(server.SessionWithLogging)
	l.info, ok2 = cs.(server.SessionWithClientInfo)
	l.sse, ok3 = cs.(server.SessionWithStreamableHTTPConfig)
	l.tools, _ = cs.(server.SessionWithTools)
	if !ok1 || !ok2 || !ok3 || cs.SessionID() == "" {
		return // not a Streamable HTTP session: mcp-go serves it
	}
	l.touched.Store(time.Now().UnixNano())
	s.live.Store(cs.SessionID(), l)
}

// Unregister is mcp-go's OnUnregisterSession hook.
func (s *Sessions) Unregister(_ context.Context, cs server.ClientSession) {
	s.live.Delete(cs.SessionID())
}

// Broadcast records that a notification may have reached every session
// (mcp-go announces list changes to all of them): the sessions are served
// by mcp-go again until it shows how it answers them.
func (s *Sessions) Broadcast() { s.notifyGen.Add(1) }

// Servable returns the live session sid when a tools/call of tool name on
// it may be answered outside mcp-go: mcp-go has shown how it answers the
// session since the last broadcast, handled one of its requests within
// touchEvery, holds no pending notification for it, the client declared
// neither sampling nor elicitation (they are asked on the request's own SSE
// stream, which only mcp-go keeps) and the session has no tool of that name
// of its own.
func (s *Sessions) Servable(sid, name string, touchEvery time.Duration) (*LiveSession, bool) {
	v, ok := s.live.Load(sid)
	if !ok {
		return nil, false
	}
	l := v.(*LiveSession)
	if !l.upgraded.Load() && l.cleanGen.Load() != s.notifyGen.Load()+1 {
		return nil, false // a broadcast may have switched it to SSE: mcp-go shows how
	}
	if time.Now().UnixNano()-l.touched.Load() > int64(touchEvery) || len(l.sess.NotificationChannel()) > 0 {
		return nil, false
	}
	if caps := l.info.GetClientCapabilities(); caps.Sampling != nil || caps.Elicitation != nil {
		return nil, false
	}
	if l.tools != nil {
		if _, shadowed := l.tools.GetSessionTools()[name]; shadowed {
			return nil, false
		}
	}
	return l, true
}

// Observe follows how mcp-go answers a request of a live session: the
// session's activity is noted and, for a request expecting an answer
// (answered), the returned writer records the answer's framing.
func (s *Sessions) Observe(w http.ResponseWriter, r *http.Request, answered bool) http.ResponseWriter {
	v, ok := loadSession(&s.live, r)
	if !ok {
		return w
	}
	l := v.(*LiveSession)
	l.touched.Store(time.Now().UnixNano())
	f, ok := w.(http.Flusher)
	if !ok || !answered {
		return w
	}
	return &observeWriter{ResponseWriter: w, Flusher: f, live: l, gen: s.notifyGen.Load()}
}

// loadSession returns the value m holds for the session r names in its
// Mcp-Session-Id header (none when it names no session).
func loadSession(m *sync.Map, r *http.Request) (any, bool) {
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return nil, false
	}
	return m.Load(sid)
}

// observeWriter watches mcp-go's answer to a request of a live session: SSE
// means the session is switched to SSE; a 200 JSON answer means it was not
// when mcp-go wrote it.
type observeWriter struct {
	http.ResponseWriter
	http.Flusher
	live *LiveSession
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

// CallSession is the client session a call answered outside mcp-go sees:
// the registered session (legacy) or a session of the request alone
// (modern, as mcp-go gives each stateless request), with the request's own
// notification channel, whose content WriteAnswer writes before the
// result.
type CallSession struct {
	live *LiveSession // nil: a modern request

	mu       sync.Mutex
	ch       chan mcp.JSONRPCNotification
	upgraded bool

	// a modern request's own state
	initialized bool
	clientInfo  mcp.Implementation
	clientCaps  mcp.ClientCapabilities
}

// LiveCallSession is the session of a call on the live session l.
func LiveCallSession(l *LiveSession) *CallSession { return &CallSession{live: l} }

// ModernCallSession is the session of a stateless request whose _meta
// decoded into info.
func ModernCallSession(info *server.RequestProtocolInfo) *CallSession {
	s := &CallSession{initialized: true}
	if info.ClientInfo != nil {
		s.clientInfo = *info.ClientInfo
	}
	s.clientCaps = *info.ClientCapabilities
	return s
}

var (
	_ server.SessionWithLogging              = (*CallSession)(nil)
	_ server.SessionWithClientInfo           = (*CallSession)(nil)
	_ server.SessionWithStreamableHTTPConfig = (*CallSession)(nil)
)

func (s *CallSession) Initialize() {
	if s.live != nil {
		s.live.sess.Initialize()
		return
	}
	s.mu.Lock()
	s.initialized = true
	s.mu.Unlock()
}

func (s *CallSession) Initialized() bool {
	if s.live != nil {
		return s.live.sess.Initialized()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.initialized
}

func (s *CallSession) NotificationChannel() chan<- mcp.JSONRPCNotification {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ch == nil {
		s.ch = make(chan mcp.JSONRPCNotification, 100) // as mcp-go's
	}
	return s.ch
}

func (s *CallSession) SessionID() string {
	if s.live != nil {
		return s.live.sess.SessionID()
	}
	return ""
}

func (s *CallSession) SetLogLevel(level mcp.LoggingLevel) {
	if s.live != nil {
		s.live.logging.SetLogLevel(level)
	}
}

func (s *CallSession) GetLogLevel() mcp.LoggingLevel {
	if s.live != nil {
		return s.live.logging.GetLogLevel()
	}
	return mcp.LoggingLevelError // mcp-go's default; a modern request's level is in its _meta
}

func (s *CallSession) GetClientInfo() mcp.Implementation {
	if s.live != nil {
		return s.live.info.GetClientInfo()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientInfo
}

func (s *CallSession) SetClientInfo(ci mcp.Implementation) {
	if s.live != nil {
		s.live.info.SetClientInfo(ci)
		return
	}
	s.mu.Lock()
	s.clientInfo = ci
	s.mu.Unlock()
}

func (s *CallSession) GetClientCapabilities() mcp.ClientCapabilities {
	if s.live != nil {
		return s.live.info.GetClientCapabilities()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.clientCaps
}

func (s *CallSession) SetClientCapabilities(cc mcp.ClientCapabilities) {
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
func (s *CallSession) UpgradeToSSEWhenReceiveNotification() {
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
func (s *CallSession) drain() ([]mcp.JSONRPCNotification, bool) {
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
