package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"regexp"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
)

// httpBackend keeps one initialised mcp-go client per sse or
// streamable_http server and reuses it for every call. When the server
// forgets the session or the connection is lost, the next call (or the
// failing call, when the retry rule allows it) opens a new one.
//
// Retry rule (at most one retry, after re-initialising):
//   - the server rejected the session (HTTP 404, or HTTP 400 whose message
//     speaks of the session): every method, tools/call included — the
//     server refused the request without running it;
//   - the connection failed (refused, reset, stream lost) for list, get,
//     read and ping;
//   - the connection failed for tools/call only if the request was never
//     completely written (net/http reports it through httptrace), since a
//     tool must not run twice.
type httpBackend struct {
	id   string
	cfg  ServerConfig
	opts *Options
	log  *slog.Logger
	hc   *http.Client
	m    *Manager

	mu         sync.Mutex
	cur        *httpConn
	connecting *connectAttempt
	closed     bool
	protocol   string
	info       *ServerInfo
	stopCtx    context.Context
	stopAll    context.CancelFunc

	// headerFunc adds a principal's credential headers to every request
	// of a per-principal connection (principal.go); nil otherwise.
	headerFunc func(context.Context) map[string]string
}

type httpConn struct {
	client *client.Client
	relay  *connRelay
	ctx    context.Context // ends when the connection is lost or closed
	cancel context.CancelCauseFunc
}

type connectAttempt struct {
	done chan struct{}
	conn *httpConn
	err  *problem
}

// errConnLost is the cause of a connection's context when it was lost.
var errConnLost = errors.New("connection to the server was lost")

func newHTTPBackend(id string, cfg ServerConfig, opts *Options, log *slog.Logger, base http.RoundTripper, m *Manager) *httpBackend {
	ctx, cancel := context.WithCancel(context.Background())
	return &httpBackend{
		id: id, cfg: cfg, opts: opts, m: m,
		log:     log.With("server", id, "transport", cfg.Transport),
		hc:      &http.Client{Transport: &limitTransport{base: base, limit: opts.MaxResultBytes}},
		stopCtx: ctx, stopAll: cancel,
	}
}

// get returns the live connection, opening one if needed. Opening is shared
// by concurrent callers and not cut short when one of them gives up.
func (b *httpBackend) get(ctx context.Context) (*httpConn, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, newProblem(ErrUnavailable, nil, "the server is being stopped (shutdown or configuration change)")
	}
	if b.cur != nil && b.cur.ctx.Err() == nil {
		c := b.cur
		b.mu.Unlock()
		return c, nil
	}
	if b.connecting == nil {
		a := &connectAttempt{done: make(chan struct{})}
		b.connecting = a
		go b.connect(a)
	}
	a := b.connecting
	b.mu.Unlock()
	connect := startStage(ctx, "connect")
	defer connect.End()
	select {
	case <-a.done:
		if a.err != nil {
			return nil, a.err
		}
		return a.conn, nil
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			return nil, &problem{msg: "was canceled by the caller while connecting to the server", kind: context.Canceled, predicate: true}
		}
		return nil, &problem{msg: "did not answer before the caller's deadline (still connecting to the server)", kind: context.DeadlineExceeded, predicate: true}
	}
}

func (b *httpBackend) connect(a *connectAttempt) {
	conn, err := b.open()
	b.mu.Lock()
	b.connecting = nil
	if err == nil && b.closed {
		err = newProblem(ErrUnavailable, nil, "the server is being stopped (shutdown or configuration change)")
		conn.cancel(errConnLost)
		go conn.client.Close()
		conn = nil
	}
	if err == nil {
		b.cur = conn
	}
	b.mu.Unlock()
	a.conn, a.err = conn, err
	close(a.done)
}

// open creates the transport and client and runs initialize.
func (b *httpBackend) open() (*httpConn, *problem) {
	ctx, cancel := context.WithTimeout(b.stopCtx, b.opts.ConnectTimeout)
	defer cancel()
	connCtx, connCancel := context.WithCancelCause(b.stopCtx)

	var wire transport.Interface
	switch b.cfg.Transport {
	case TransportSSE:
		tr, err := transport.NewSSE(b.cfg.URL,
			transport.WithHTTPClient(b.hc),
			transport.WithHeaders(b.cfg.Headers),
			transport.WithHeaderFunc(b.headerFunc),
			transport.WithEndpointTimeout(b.opts.ConnectTimeout),
			transport.WithResponseTimeout(24*time.Hour), // the call's context bounds it
			transport.WithSSELogger(b.log),
		)
		if err != nil {
			connCancel(err)
			return nil, newProblem(ErrUnavailable, err, "invalid url %q: %v", b.cfg.URL, err)
		}
		wire = &sseWire{SSE: tr, limit: b.opts.MaxResultBytes}
	default:
		tr, err := transport.NewStreamableHTTP(b.cfg.URL,
			transport.WithHTTPBasicClient(b.hc),
			transport.WithHTTPHeaders(b.cfg.Headers),
			transport.WithHTTPHeaderFunc(b.headerFunc),
			transport.WithHTTPLogger(b.log),
		)
		if err != nil {
			connCancel(err)
			return nil, newProblem(ErrUnavailable, err, "invalid url %q: %v", b.cfg.URL, err)
		}
		wire = &streamableWire{StreamableHTTP: tr, limit: b.opts.MaxResultBytes}
	}
	b.mu.Lock()
	protocol := b.protocol
	b.mu.Unlock()
	var copts []client.ClientOption
	if protocol != "" && !mcp.IsModernProtocol(protocol) {
		copts = append(copts, client.WithProtocolVersion(protocol))
	}
	relay := newConnRelay(b.m, b.id, b.log)
	relay.subs.life = connCtx
	copts = append(copts, relay.clientOptions()...)
	c := client.NewClient(wire, copts...)
	c.OnNotification(relay.notify)
	c.OnConnectionLost(func(err error) {
		if errors.Is(err, ErrResultTooLarge) {
			connCancel(err)
		} else {
			connCancel(errors.Join(errConnLost, err))
		}
		b.log.Info("connection to upstream lost", "err", err)
	})
	fail := func(err error, format string, args ...any) (*httpConn, *problem) {
		connCancel(errConnLost)
		go c.Close()
		return nil, newProblem(ErrUnavailable, err, format, args...)
	}
	if err := c.Start(connCtx); err != nil {
		return fail(err, "could not connect to %s: %s", b.cfg.URL, netCause(err))
	}
	sctx, st := withCallState(ctx)
	res, err := c.Initialize(sctx, initializeRequest())
	if err != nil {
		if ctx.Err() != nil {
			return fail(context.DeadlineExceeded, "%s did not answer initialize within %s (ConnectTimeout)", b.cfg.URL, fmtDuration(b.opts.ConnectTimeout))
		}
		if st.status.Load() == http.StatusUnauthorized {
			connCancel(errConnLost)
			go c.Close()
			return nil, duringInitialize(unauthorized(err))
		}
		if pp := describeAnswer("initialize", err, st, b.opts.MaxResultBytes); pp != nil {
			connCancel(errConnLost)
			go c.Close()
			return nil, duringInitialize(pp)
		}
		return fail(err, "could not connect to %s: %s", b.cfg.URL, netCause(err))
	}
	info := serverInfo(res, c)
	// 2026-07-28: tools/call without mcp-go's per-request re-encoding,
	// with the headers mcp-go would send (internal/mcpfix).
	if sc := mcpfix.NewStatelessCaller(wire, c.ProtocolVersion(), initializeRequest().Params.ClientInfo, statelessCaps()); sc != nil && b.cfg.Transport == TransportStreamableHTTP {
		sc.SendHeaders()
		relay.stateless = sc
	}
	b.mu.Lock()
	b.protocol = c.ProtocolVersion()
	b.info = &info
	b.mu.Unlock()
	b.log.Info("connected to upstream server", "protocol", c.ProtocolVersion(), "session", wire.GetSessionId() != "")
	return &httpConn{client: c, relay: relay, ctx: connCtx, cancel: connCancel}, nil
}

// drop forgets conn (if it is still the current one) and closes it.
func (b *httpBackend) drop(conn *httpConn, why error) {
	b.mu.Lock()
	if b.cur == conn {
		b.cur = nil
	}
	b.mu.Unlock()
	conn.cancel(why)
	go conn.client.Close()
}

func (b *httpBackend) do(ctx context.Context, op string, idempotent bool, timeout time.Duration, fn callFunc) error {
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, b.opts.ConnectTimeout)
		conn, err := b.get(cctx)
		connectExpired := cctx.Err() != nil && ctx.Err() == nil
		cancel()
		if err != nil {
			if connectExpired { // our connect timeout, not the caller's deadline: the server is unreachable
				return newProblem(ErrUnavailable, context.DeadlineExceeded, "could not connect to %s within %s (ConnectTimeout)", b.cfg.URL, fmtDuration(b.opts.ConnectTimeout))
			}
			return err
		}
		sctx, st := withCallState(ctx)
		sctx = httptrace.WithClientTrace(sctx, &httptrace.ClientTrace{
			WroteRequest: func(info httptrace.WroteRequestInfo) {
				if info.Err == nil {
					st.sent.Store(true)
				}
			},
		})
		lctx, cancelLost := context.WithCancelCause(sctx)
		stopLost := context.AfterFunc(conn.ctx, func() { cancelLost(context.Cause(conn.ctx)) })
		callCtx, cancelCall := context.WithTimeoutCause(lctx, timeout, errCallTimeout)
		relayCtx, end := conn.relay.begin(callCtx)
		err = fn(relayCtx, conn.client)
		end()
		stopLost()
		lost := lctx.Err() != nil && ctx.Err() == nil
		lostCause := context.Cause(lctx)
		prob := b.describe(callCtx, ctx, timeout, op, err, st, lost, lostCause)
		timedOut := callCtx.Err() != nil && !lost
		cancelCall()
		cancelLost(nil)
		if err == nil {
			return nil
		}

		sessionGone := sessionRejected(err, st)
		connFailed := lost || (st.sendErr != nil && !sessionGone && !timedOut)
		// An SSE session lives on its stream, so a broken request means a
		// broken session. A Streamable HTTP request is one POST among many:
		// its failure (a pooled TCP connection the server had just closed,
		// say) says nothing about the session or the other calls in flight,
		// which dropping the client would cancel. A session the server no
		// longer knows is answered with 404 and re-initialised.
		if sessionGone || (connFailed && b.cfg.Transport == TransportSSE) {
			b.drop(conn, errConnLost)
		}
		retry := attempt == 0 && ctx.Err() == nil && !errors.Is(prob, ErrResultTooLarge) &&
			(sessionGone || (connFailed && (idempotent || !st.sent.Load())))
		if retry {
			reason := "the connection failed: " + netCause(err)
			if sessionGone {
				reason = "the server no longer knows the session"
			}
			b.log.Info("re-initialising the upstream session and retrying", "op", op, "reason", reason)
			continue
		}
		return prob
	}
}

func (b *httpBackend) describe(callCtx, parent context.Context, timeout time.Duration, op string, err error, st *callState, lost bool, lostCause error) *problem {
	if err == nil {
		return nil
	}
	if n := st.tooLarge.Load(); n != 0 {
		return tooLarge(max(n, 0), b.opts.MaxResultBytes)
	}
	if st.status.Load() == http.StatusUnauthorized {
		return unauthorized(err)
	}
	if lost {
		if errors.Is(lostCause, ErrResultTooLarge) {
			return tooLarge(0, b.opts.MaxResultBytes)
		}
		return newProblem(ErrUnavailable, err, "lost the connection to %s during the call", b.cfg.URL)
	}
	if cp := contextProblem(callCtx, parent, timeout, ""); cp != nil {
		return cp
	}
	if sessionRejected(err, st) {
		return newProblem(ErrUnavailable, err, "the server no longer knows the session (it restarted?) and re-initialising did not help: %v", unwrapTransport(err))
	}
	if pp := describeAnswer(op, err, st, b.opts.MaxResultBytes); pp != nil {
		return pp
	}
	return newProblem(ErrUnavailable, err, "could not reach %s: %s", b.cfg.URL, netCause(err))
}

// sessionWords matches the messages servers use for a forgotten session:
// "Session not found", "Bad Request: No valid session ID provided",
// "Invalid session ID", "session expired".
var sessionWords = regexp.MustCompile(`(?i)session.*(not found|no longer|invalid|unknown|expired|terminated)|(no valid|invalid|unknown|missing) session`)

// sessionRejected reports whether the server refused the request because it
// does not know the session: mcp-go's ErrSessionTerminated (HTTP 404), or
// an HTTP 400/404 answer that says so.
func sessionRejected(err error, st *callState) bool {
	if errors.Is(err, transport.ErrSessionTerminated) {
		return true
	}
	status := st.status.Load()
	if status != http.StatusBadRequest && status != http.StatusNotFound {
		return false
	}
	if st.rpcErr != nil && sessionWords.MatchString(st.rpcErr.Message) {
		return true
	}
	return sessionWords.MatchString(err.Error())
}

// netCause words a transport failure without mcp-go's and net/http's
// nested prefixes: "connection refused", "the connection closed before an
// answer came".
func netCause(err error) string {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return "the connection closed before an answer came"
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return "connection refused"
	}
	if errors.Is(err, syscall.ECONNRESET) {
		return "connection reset by the server"
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return unwrapTransport(err).Error()
}

// unwrapTransport drops mcp-go's "transport error: " prefix.
func unwrapTransport(err error) error {
	var te *transport.Error
	if errors.As(err, &te) && te.Err != nil {
		return te.Err
	}
	return err
}

func (b *httpBackend) stop() {
	b.mu.Lock()
	b.closed = true
	conn := b.cur
	b.cur = nil
	b.mu.Unlock()
	if conn != nil {
		conn.cancel(errConnLost)
		done := make(chan struct{})
		go func() { conn.client.Close(); close(done) }()
		t := time.NewTimer(2 * time.Second)
		select {
		case <-done:
		case <-t.C:
		}
		t.Stop()
	}
	b.stopAll()
}

func (b *httpBackend) reap(time.Time) {}

func (b *httpBackend) serverInfo() (ServerInfo, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.info == nil {
		return ServerInfo{}, false
	}
	return *b.info, true
}
