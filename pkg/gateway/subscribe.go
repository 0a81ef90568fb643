package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Subscriber is the optional part of Upstreams that forwards resource
// subscriptions (pkg/upstream.Manager has it). Without it the gateway
// does not offer resources/subscribe.
type Subscriber interface {
	Subscribe(ctx context.Context, server, uri string) error
	Unsubscribe(ctx context.Context, server, uri string) error
	OnResourceUpdated(fn upstream.ResourceUpdatedFunc)
}

// subscriptions maps an upstream resource to the client sessions
// subscribed to it, under the URI each one used.
type subscriptions struct {
	mu   sync.Mutex
	subs map[origin]map[string]string // (server, upstream URI) → session id → exposed URI
}

// subscribeHook handles resources/subscribe and resources/unsubscribe
// before mcp-go acknowledges them: the policy check and the upstream
// request happen here, and an error fails the request. A URI the caller
// may not see is answered like one that does not exist.
func (g *Server) subscribeHook(ctx context.Context, _ any, message any) error {
	raw, ok := message.(json.RawMessage)
	if !ok {
		return nil
	}
	// The HTTP handler has read the method already: every other request
	// (tools/call above all) skips decoding its params and _meta here.
	if m := requestMethod(ctx); m != "" && m != string(mcp.MethodResourcesSubscribe) && m != string(mcp.MethodResourcesUnsubscribe) {
		return nil
	}
	var head struct {
		Method string `json:"method"`
		Params struct {
			URI  string         `json:"uri"`
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return nil
	}
	subscribe := head.Method == string(mcp.MethodResourcesSubscribe)
	if !subscribe && head.Method != string(mcp.MethodResourcesUnsubscribe) {
		return nil
	}
	if _, modern := head.Params.Meta[mcp.MetaKeyProtocolVersion]; modern || head.Params.URI == "" {
		return nil // mcp-go answers: removed in 2026-07-28, or uri is required
	}
	up, ok := g.cfg.Upstreams.(Subscriber)
	sid := sessionID(ctx)
	if !ok || sid == "" {
		return nil
	}
	uri := head.Params.URI
	pol, authed := policy.FromContext(ctx)
	srv, orig, known := g.resolveSubscription(uri)
	if !authed || !known || !pol.AllowsURI(srv, orig) {
		return fmt.Errorf("resource not found: %s", uri)
	}
	key := origin{srv, orig}
	if subscribe {
		if err := up.Subscribe(ctx, srv, orig); err != nil {
			return fmt.Errorf("subscribe to %s: %w", uri, g.callerError(ctx, srv, err))
		}
		g.subs.mu.Lock()
		if g.subs.subs == nil {
			g.subs.subs = map[origin]map[string]string{}
		}
		if g.subs.subs[key] == nil {
			g.subs.subs[key] = map[string]string{}
		}
		g.subs.subs[key][sid] = uri
		g.subs.mu.Unlock()
		return nil
	}
	if g.dropSubscription(key, sid) {
		if err := up.Unsubscribe(ctx, srv, orig); err != nil {
			g.log.Debug("upstream unsubscribe failed", "server", srv, "uri", orig, "error", err)
		}
	}
	return nil
}

// dropSubscription removes sid's subscription to key and reports whether
// nobody is subscribed any more.
func (g *Server) dropSubscription(key origin, sid string) bool {
	g.subs.mu.Lock()
	defer g.subs.mu.Unlock()
	set, ok := g.subs.subs[key]
	if !ok {
		return false
	}
	delete(set, sid)
	if len(set) > 0 {
		return false
	}
	delete(g.subs.subs, key)
	return true
}

// endSession drops the subscriptions of a session that ended and
// unsubscribes upstream from what nobody watches any more.
func (g *Server) endSession(_ context.Context, s server.ClientSession) {
	sid := s.SessionID()
	var orphans []origin
	g.subs.mu.Lock()
	for key, set := range g.subs.subs {
		if _, ok := set[sid]; ok {
			delete(set, sid)
			if len(set) == 0 {
				delete(g.subs.subs, key)
				orphans = append(orphans, key)
			}
		}
	}
	g.subs.mu.Unlock()
	up, ok := g.cfg.Upstreams.(Subscriber)
	if !ok || len(orphans) == 0 {
		return
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), g.cfg.UpstreamListTimeout)
		defer cancel()
		for _, key := range orphans {
			if err := up.Unsubscribe(ctx, key.server, key.name); err != nil {
				g.log.Debug("upstream unsubscribe failed", "server", key.server, "uri", key.name, "error", err)
			}
		}
	}()
}

// resourceUpdated relays an upstream's notifications/resources/updated to
// the sessions subscribed to that resource, each under its own URI.
func (g *Server) resourceUpdated(srv, uri string) {
	if canon, err := policy.CanonicalURI(uri); err == nil {
		uri = canon // subscriptions are kept under canonical URIs
	}
	g.subs.mu.Lock()
	targets := make(map[string]string, len(g.subs.subs[origin{srv, uri}]))
	for sid, exposed := range g.subs.subs[origin{srv, uri}] {
		targets[sid] = exposed
	}
	g.subs.mu.Unlock()
	defer g.broadcast()
	for sid, exposed := range targets {
		err := g.srv.SendNotificationToSpecificClient(sid, mcp.MethodNotificationResourceUpdated, map[string]any{"uri": exposed})
		if err != nil {
			g.log.Debug("resource update not delivered", "session", session.Ref(sid), "error", err)
		}
	}
}

// resolveSubscription maps a URI to subscribe to: a gateway:// URI, a
// listed resource or template match of an unprefixed server, and else,
// when exactly one server is unprefixed, any URI that is not a gateway://
// one (a server may accept subscriptions to URIs it does not list).
func (g *Server) resolveSubscription(uri string) (srv, orig string, ok bool) {
	if srv, orig, ok = g.resolveURI(uri); ok {
		return srv, orig, true
	}
	if strings.HasPrefix(uri, "gateway://") {
		return "", "", false
	}
	var only string
	for _, id := range g.cfg.Upstreams.Servers() {
		if g.isUnprefixed(id) {
			if only != "" {
				return "", "", false
			}
			only = id
		}
	}
	canon, err := policy.CanonicalURI(uri)
	if err != nil {
		return "", "", false
	}
	return only, canon, only != ""
}
