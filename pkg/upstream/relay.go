package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
)

// Relay receives what an upstream sends towards the client while one call
// (tools/call, prompts/get, resources/read) runs: log messages, and sampling
// and elicitation requests, which it answers. Nil fields are not relayed: a
// log message is dropped, a request is refused with an error.
//
// The functions are called from the upstream connection's goroutines, at
// most until the call returns; a request's context ends when the call's
// context ends.
type Relay struct {
	// Log receives notifications/message.
	Log func(mcp.LoggingMessageNotification)
	// LogLevel is asked of upstreams on the 2026-07-28 protocol, which
	// send log messages only for requests that declare a level; "" asks
	// for none. Older upstreams use their session's level.
	LogLevel mcp.LoggingLevel
	// Sample answers sampling/createMessage.
	Sample func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error)
	// Elicit answers elicitation/create.
	Elicit func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
}

type relayKey struct{}

// WithRelay routes what the upstream sends during the call made with ctx to
// r. See the package documentation for the routing rule.
func WithRelay(ctx context.Context, r Relay) context.Context {
	return context.WithValue(ctx, relayKey{}, &r)
}

func relayFrom(ctx context.Context) *Relay {
	r, _ := ctx.Value(relayKey{}).(*Relay)
	return r
}

// ResourceUpdatedFunc receives an upstream's notifications/resources/updated.
type ResourceUpdatedFunc func(server, uri string)

// connRelay is the router of one upstream connection (one mcp-go client):
// it knows the calls in flight on it and delivers what the server sends
// outside a response to the right one.
//
// Routing rule: a message that arrives in the context of a call (a request
// the mcp-go client handles with the call's context: a server-initiated
// request on a Streamable HTTP response stream, or an input request of a
// 2026-07-28 multi round-trip result) goes to that call. Any other message
// (stdio, SSE, the standalone GET stream, every notification) goes to the
// call in flight on the connection only when there is exactly one;
// otherwise it is dropped and counted, since it could belong to any of them.
type connRelay struct {
	server string
	log    *slog.Logger
	m      *Manager

	// stateless sends tools/call on a 2026-07-28 stdio or Streamable HTTP
	// connection (nil otherwise); set before the connection is used.
	stateless *mcpfix.StatelessCaller

	// subs holds the resource subscriptions of a 2026-07-28 connection
	// (listen.go); its life is set before the connection is used.
	subs *listenSubs

	mu      sync.Mutex
	calls   map[*inflight]struct{}
	lastEnd time.Time // when a call that got notifications last ended
}

// Servers may write a notification after the response of the call it
// belongs to (mcp-go's stdio server sends notifications from another
// goroutine than responses). So a call that got notifications is kept
// registered for lingerDelay after its response, to catch a straggler, and
// an unassociated message within quietAfterEnd of the end of such a call
// is dropped rather than given to another call still running, which it may
// not belong to.
const (
	lingerDelay   = 25 * time.Millisecond
	quietAfterEnd = 50 * time.Millisecond
)

// inflight is one request running on a connection.
type inflight struct {
	hub      *connRelay
	ctx      context.Context // the call's context
	relay    *Relay          // nil: the caller relays nothing
	notified atomic.Bool     // a notification was delivered to it
}

// linger keeps the call of ctx registered a little after its response if
// it got notifications, so that one written after the response still
// reaches it.
func linger(ctx context.Context) {
	if in, ok := ctx.Value(inflightKey{}).(*inflight); ok && in.notified.Load() {
		_ = sleepCtx(ctx, lingerDelay)
	}
}

// markNotified records that the call of ctx got a notification.
func markNotified(ctx context.Context) {
	if in, ok := ctx.Value(inflightKey{}).(*inflight); ok {
		in.notified.Store(true)
	}
}

type inflightKey struct{}

func newConnRelay(m *Manager, server string, log *slog.Logger) *connRelay {
	return &connRelay{server: server, log: log, m: m, calls: map[*inflight]struct{}{}, subs: newListenSubs()}
}

// clientOptions makes the client declare sampling and elicitation (the
// answers come from the calling client, or an error says why not) and
// route notifications through h.
func (h *connRelay) clientOptions() []client.ClientOption {
	return []client.ClientOption{client.WithSamplingHandler(h), client.WithElicitationHandler(h)}
}

// begin registers a request on the connection until end is called.
func (h *connRelay) begin(ctx context.Context) (context.Context, func()) {
	in := &inflight{hub: h, ctx: ctx, relay: relayFrom(ctx)}
	h.mu.Lock()
	h.calls[in] = struct{}{}
	h.mu.Unlock()
	return context.WithValue(ctx, inflightKey{}, in), func() {
		h.mu.Lock()
		delete(h.calls, in)
		if in.notified.Load() {
			h.lastEnd = time.Now()
		}
		h.mu.Unlock()
	}
}

// route finds the call a message belongs to: the one in ctx, else the only
// one in flight. why explains a nil answer.
func (h *connRelay) route(ctx context.Context) (in *inflight, why string) {
	if in, ok := ctx.Value(inflightKey{}).(*inflight); ok && in.hub == h {
		return in, ""
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	switch len(h.calls) {
	case 0:
		return nil, "no call is running on this upstream connection"
	case 1:
		if since := time.Since(h.lastEnd); since < quietAfterEnd {
			return nil, fmt.Sprintf("a call that got notifications on this upstream connection ended %s ago and the message may be its late one", since.Round(time.Millisecond))
		}
		for in := range h.calls {
			return in, ""
		}
	}
	return nil, fmt.Sprintf("%d calls are running on this upstream connection and the message does not say which one it belongs to", len(h.calls))
}

func (h *connRelay) dropped(what, why string) {
	if h.m != nil {
		h.m.relayDropped.Add(1)
	}
	h.log.Debug("upstream message not relayed", "message", what, "reason", why)
}

// notify handles every notification of the connection.
func (h *connRelay) notify(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationProgress):
		routeNotification(n)
	case string(mcp.MethodNotificationMessage):
		in, why := h.route(context.Background())
		if in == nil {
			h.dropped(n.Method, why)
			return
		}
		if in.relay == nil || in.relay.Log == nil || in.ctx.Err() != nil {
			h.dropped(n.Method, "the calling client does not take log messages")
			return
		}
		f := n.Params.AdditionalFields
		msg := mcp.LoggingMessageNotification{Notification: mcp.Notification{Method: n.Method}}
		level, _ := f["level"].(string)
		msg.Params.Level = mcp.LoggingLevel(level)
		msg.Params.Logger, _ = f["logger"].(string)
		msg.Params.Data = f["data"]
		in.notified.Store(true)
		in.relay.Log(msg)
	case mcp.MethodNotificationSubscriptionsAcknowledged:
		h.subs.acknowledged(n)
	case string(mcp.MethodNotificationToolsListChanged), string(mcp.MethodNotificationPromptsListChanged), string(mcp.MethodNotificationResourcesListChanged):
		if fn := h.m.listChangedFunc(); fn != nil {
			fn(h.server, n.Method)
		}
	case mcp.MethodNotificationResourceUpdated:
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		if fn := h.m.resourceUpdated(); fn != nil && uri != "" {
			fn(h.server, uri)
		}
	}
}

// errNoClient is the answer to a request that has no route to a client.
var errNoClient = errors.New("the gateway has no client to forward this request to")

// target finds the relay for a server-initiated request and a context
// bounded by its call.
func (h *connRelay) target(ctx context.Context, method string) (*Relay, context.Context, context.CancelFunc, error) {
	in, why := h.route(ctx)
	if in == nil {
		h.dropped(method, why)
		return nil, nil, nil, fmt.Errorf("%w: %s", errNoClient, why)
	}
	if in.relay == nil {
		return nil, nil, nil, fmt.Errorf("%w: the call that is running does not relay %s", errNoClient, method)
	}
	rctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(in.ctx, cancel)
	return in.relay, rctx, func() { stop(); cancel() }, nil
}

// RelayError is the failure of a sampling or elicitation request the
// upstream made during a call: no client to ask, a client without the
// capability, or the client's own error.
type RelayError struct {
	Method string // sampling/createMessage or elicitation/create
	Err    error
}

func (e *RelayError) Error() string {
	return "the server's " + e.Method + " request was not answered: " + e.Err.Error()
}

func (e *RelayError) Unwrap() error { return e.Err }

// CreateMessage implements client.SamplingHandler.
func (h *connRelay) CreateMessage(ctx context.Context, req mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
	// Input requests of a multi round-trip result come with their content
	// still a JSON object.
	for i := range req.Messages {
		if c, err := mcp.ParseSamplingContent(req.Messages[i].Content); err == nil {
			req.Messages[i].Content = c
		}
	}
	return relayRequest(ctx, h, string(mcp.MethodSamplingCreateMessage), "sampling", req,
		func(r *Relay) func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return r.Sample
		})
}

// Elicit implements client.ElicitationHandler.
func (h *connRelay) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return relayRequest(ctx, h, string(mcp.MethodElicitationCreate), "elicitation", req,
		func(r *Relay) func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return r.Elicit
		})
}

// relayRequest sends a server's method request to the handler answer picks
// from the relay of the client request it belongs to; feature names what a
// client without that handler does not support.
func relayRequest[Req, Res any](ctx context.Context, h *connRelay, method, feature string, req Req, answer func(*Relay) func(context.Context, Req) (Res, error)) (Res, error) {
	var zero Res
	r, rctx, done, err := h.target(ctx, method)
	if err != nil {
		return zero, &RelayError{method, err}
	}
	defer done()
	send := answer(r)
	if send == nil {
		return zero, &RelayError{method, errors.New("the gateway's client does not support " + feature)}
	}
	res, err := send(rctx, req)
	if err != nil {
		return zero, &RelayError{method, err}
	}
	return res, nil
}

// withLogLevel asks a 2026-07-28 upstream for log messages at the relay's
// level (older upstreams ignore the _meta field).
func withLogLevel(ctx context.Context, meta **mcp.Meta) {
	r := relayFrom(ctx)
	if r == nil || r.Log == nil || r.LogLevel == "" {
		return
	}
	if *meta == nil {
		*meta = &mcp.Meta{}
	}
	if (*meta).AdditionalFields == nil {
		(*meta).AdditionalFields = map[string]any{}
	}
	(*meta).AdditionalFields[mcp.MetaKeyLogLevel] = r.LogLevel
}

// relayStats counts what could not be relayed.
type relayStats struct {
	relayDropped atomic.Uint64
	onUpdated    atomic.Pointer[ResourceUpdatedFunc]
	listChanged  listChangedHook
}

// RelayDropped returns how many upstream log messages and requests were
// not relayed because they could not be tied to one call (or came when
// no call was running).
func (m *Manager) RelayDropped() uint64 { return m.relayDropped.Load() }

// OnResourceUpdated sets the function that receives every upstream's
// notifications/resources/updated (nil: drop them).
func (m *Manager) OnResourceUpdated(fn ResourceUpdatedFunc) {
	if fn == nil {
		m.onUpdated.Store(nil)
		return
	}
	m.onUpdated.Store(&fn)
}

func (m *Manager) resourceUpdated() ResourceUpdatedFunc {
	if m == nil {
		return nil
	}
	if p := m.onUpdated.Load(); p != nil {
		return *p
	}
	return nil
}
