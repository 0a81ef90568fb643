package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// SessionIDs issues and validates legacy-protocol session ids for one
// principal at a time (pkg/session.IDManager): a session answers only the
// principal (API key, OAuth subject) that opened it.
type SessionIDs interface {
	For(principal string) server.SessionIdManager
}

// HTTPOptions configures the Streamable HTTP endpoint.
type HTTPOptions struct {
	// SessionIDs issues and validates legacy-protocol session ids; use a
	// store-backed manager so any instance can continue a session. Nil
	// keeps sessions in this process's memory.
	SessionIDs SessionIDs
	// MaxBodyBytes rejects larger POST bodies with HTTP 413. Default 4 MiB.
	MaxBodyBytes int64
	// MaxJSONDepth rejects more deeply nested JSON with HTTP 400. Default 64.
	MaxJSONDepth int
	// Observe, when set, is called after every POST with the JSON-RPC
	// method (or "invalid") and how long the gateway took to answer.
	Observe func(method string, d time.Duration)
	// Extra mcp-go options.
	Options []server.StreamableHTTPOption
	// NoFastCall leaves every tools/call to mcp-go. The gateway's own
	// tools/call path (fastcall.go) reproduces mcp-go's transport with its
	// default options, the protocol versions it serves and its idle sweeper;
	// set this when Options change how mcp-go answers a POST otherwise
	// (CORS, a context function, an event store that offers resumption).
	NoFastCall bool
}

// Handler returns the MCP Streamable HTTP handler. Put auth.Middleware in
// front of it: requests without a policy in their context see nothing.
func (g *Server) Handler(o HTTPOptions) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = 64
	}
	// relayEvents first, so that an event store in o.Options replaces it.
	opts := append([]server.StreamableHTTPOption{server.WithEventStore(mcpfix.RelayEvents{}), server.WithStreamableHTTPLogger(g.log)}, o.Options...)
	if o.SessionIDs == nil {
		o.SessionIDs = session.NewIDManager(session.NewMemory(), 0)
	}
	opts = append(opts, server.WithSessionIdManagerResolver(sessionResolver{o.SessionIDs}))
	mcpHandler := server.NewStreamableHTTPServer(g.srv, opts...)
	var fp *fastPath
	if !o.NoFastCall {
		fp = g.newFastPath(mcpHandler, o.SessionIDs)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !mcpfix.OwnSession(w, r, func() server.SessionIdManager { return o.SessionIDs.For(principalOf(r.Context())) }) {
			return
		}
		if !g.initGate.Wait(r) {
			return // the client went away
		}
		if r.Method == http.MethodGet {
			if sid := r.Header.Get(server.HeaderKeySessionID); sid != "" {
				defer g.openStream(sid)()
			}
		}
		if r.Method != http.MethodPost || r.Body == nil {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		// Read once: a Lambda adapter in front has read it already and
		// handed over the same bytes.
		body, err := httpserve.ReadBody(r, o.MaxBodyBytes)
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, -32700, "could not read the request body: "+err.Error())
			return
		}
		if int64(len(body)) > o.MaxBodyBytes {
			g.Metrics.Rejected.Add(1)
			httpserve.DiscardRest(w, r)
			writeRPCError(w, http.StatusRequestEntityTooLarge, -32600,
				fmt.Sprintf("request body exceeds the limit of %d bytes (MCP_GATEWAY_MAX_BODY_BYTES)", o.MaxBodyBytes))
			return
		}
		if d := jsonDepth(body); d > o.MaxJSONDepth {
			g.Metrics.Rejected.Add(1)
			writeRPCError(w, http.StatusBadRequest, -32600,
				fmt.Sprintf("request JSON is nested %d levels deep; the limit is %d", d, o.MaxJSONDepth))
			return
		}
		head, decoded := readHead(body) // invalid JSON is answered by mcp-go with a parse error
		if g.cfg.LazyToolList && !g.listBuilt.Load() && needsToolList(r.Context(), &head, body) {
			g.ensureToolList()
		}
		if decoded && head.Method == string(mcp.MethodToolsCall) {
			name := ""
			if head.Params.Name != nil {
				name = *head.Params.Name
			}
			metrics.NoteTool(r.Context(), name) // per-tool metrics from this decode
		}
		if decoded && g.cfg.NoClientStreams && head.Method == "subscriptions/listen" {
			writeRPCErrorFor(w, head.ID, mcp.METHOD_NOT_FOUND, "subscriptions/listen needs a long-lived stream, which this Lambda deployment cannot hold open; call tools/list again instead")
			return
		}
		if id, why := invalidIdentity(&head, decoded); why != "" {
			writeInvalidParams(w, id, why)
			return
		}
		if decoded {
			ctx, span := tracing.StartRequest(r.Context(), g.traceRequest(r, &head))
			defer span.End()
			r = r.WithContext(ctx)
		}
		start := time.Now()
		if decoded && g.isTaskRequest(&head) {
			g.serveTask(w, r, &head, body)
			if o.Observe != nil {
				o.Observe("tasks", time.Since(start))
			}
			return
		}
		if decoded && g.cfg.Cancels != nil && head.Method == string(mcp.MethodToolsCall) && len(head.ID) > 0 {
			var stop func()
			r, stop = g.watchCancel(r, &head)
			defer stop()
		}
		if decoded && fp != nil && g.fastCall(w, r, body, &head, fp) {
			if o.Observe != nil {
				o.Observe(head.Method, time.Since(start))
			}
			return
		}
		if decoded && head.Method == string(mcp.MethodNotificationCancelled) {
			g.cancelInflight(r, &head)
			if g.cfg.Cancels != nil {
				g.recordCancel(r, &head)
			}
		}
		if decoded && fp != nil {
			w = g.observe(w, r, &head)
		}
		r.ContentLength = int64(len(body)) // r.Body holds the same bytes (ReadBody)
		if head.Method == string(mcp.MethodInitialize) {
			var done func()
			w, done = g.initGate.Initialize(w)
			defer done()
		}
		if set := g.tools.Load(); head.Method == string(mcp.MethodToolsList) && len(set.verbatim) > 0 {
			var done func()
			w, done = mcpfix.PatchList(w, "tools", set.patchListed)
			defer done()
		}
		mcpHandler.ServeHTTP(w, r.WithContext(withRequestMethod(r.Context(), head.Method)))
		if o.Observe != nil {
			m := head.Method
			if !knownMethod(m) {
				m = "other" // bounded label set: clients choose the method string
			}
			o.Observe(m, time.Since(start))
		}
	})
}

// sessionResolver hands mcp-go the session id manager of the request's
// principal, so that a POST naming another principal's session (a call,
// a sampling response) is answered 404 like an unknown session.
type sessionResolver struct{ ids SessionIDs }

func (s sessionResolver) ResolveSessionIdManager(r *http.Request) server.SessionIdManager {
	if r == nil {
		// mcp-go's idle sweeper: it drops this instance's transport state
		// of a session idle here, which must not end the session itself.
		return mcpfix.KeepSessions{}
	}
	return s.ids.For(principalOf(r.Context()))
}

// principalOf is the authenticated principal of a request; requests
// without one (no auth middleware) share the empty principal.
func principalOf(ctx context.Context) string {
	p, _ := auth.PrincipalFrom(ctx)
	return p
}

func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
		"error": map[string]any{"code": code, "message": msg},
	})
}

// writeRPCErrorFor answers the JSON-RPC request id with an error.
func writeRPCErrorFor(w http.ResponseWriter, id json.RawMessage, code int, msg string) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": msg},
	})
}

// jsonDepth returns the maximum nesting of objects and arrays in b,
// ignoring brackets inside strings.
func jsonDepth(b []byte) int {
	depth, maxDepth := 0, 0
	inString, escaped := false, false
	for _, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		switch c {
		case '"':
			inString = true
		case '{', '[':
			depth++
			if depth > maxDepth {
				maxDepth = depth
			}
		case '}', ']':
			depth--
		}
	}
	return maxDepth
}

func knownMethod(m string) bool {
	switch m {
	case "initialize", "ping", "tools/list", "tools/call", "prompts/list", "prompts/get",
		"resources/list", "resources/read", "resources/templates/list", "server/discover",
		"notifications/initialized", "logging/setLevel", "subscriptions/listen":
		return true
	}
	return false
}

type methodKey struct{}

func withRequestMethod(ctx context.Context, method string) context.Context {
	return context.WithValue(ctx, methodKey{}, method)
}

func requestMethod(ctx context.Context) string {
	m, _ := ctx.Value(methodKey{}).(string)
	return m
}

func sessionID(ctx context.Context) string {
	if s := server.ClientSessionFromContext(ctx); s != nil {
		return s.SessionID()
	}
	return ""
}

// needsToolList reports whether mcp-go needs the MCP tool list to answer
// a request (Config.LazyToolList): a tools/call of a catalog tool by name,
// an admin key's tools/list, or a batch (not inspected).
func needsToolList(ctx context.Context, head *requestHead, body []byte) bool {
	switch method := head.Method; method {
	case string(mcp.MethodToolsCall):
		return head.Params.Name == nil || !isMeta(*head.Params.Name)
	case string(mcp.MethodToolsList):
		pol, ok := policy.FromContext(ctx)
		return ok && pol.Admin
	case "":
		return len(bytes.TrimLeft(body, " \t\r\n")) > 0 && bytes.TrimLeft(body, " \t\r\n")[0] == '['
	}
	return false
}
