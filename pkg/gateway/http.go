package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// HTTPOptions configures the Streamable HTTP endpoint.
type HTTPOptions struct {
	// SessionIDs issues and validates legacy-protocol session ids; use a
	// store-backed manager so any instance can continue a session. Nil
	// keeps mcp-go's default (stateless, format-checked ids).
	SessionIDs server.SessionIdManager
	// MaxBodyBytes rejects larger POST bodies with HTTP 413. Default 4 MiB.
	MaxBodyBytes int64
	// MaxJSONDepth rejects more deeply nested JSON with HTTP 400. Default 64.
	MaxJSONDepth int
	// Observe, when set, is called after every POST with the JSON-RPC
	// method (or "invalid") and how long the gateway took to answer.
	Observe func(method string, d time.Duration)
	// Extra mcp-go options.
	Options []server.StreamableHTTPOption
}

// Handler returns the MCP Streamable HTTP handler. Put auth.Middleware in
// front of it: requests without a policy in their context see nothing.
func (g *Gateway) Handler(o HTTPOptions) http.Handler {
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = 4 << 20
	}
	if o.MaxJSONDepth <= 0 {
		o.MaxJSONDepth = 64
	}
	// relayEvents first, so that an event store in o.Options replaces it.
	opts := append([]server.StreamableHTTPOption{server.WithEventStore(relayEvents{})}, o.Options...)
	if o.SessionIDs != nil {
		opts = append(opts, server.WithSessionIdManager(o.SessionIDs))
	}
	mcpHandler := server.NewStreamableHTTPServer(g.srv, opts...)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if sid := r.Header.Get(server.HeaderKeySessionID); sid != "" {
				defer g.openStream(sid)()
			}
		}
		if r.Method != http.MethodPost || r.Body == nil {
			mcpHandler.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(io.LimitReader(r.Body, o.MaxBodyBytes+1))
		if err != nil {
			writeRPCError(w, http.StatusBadRequest, -32700, "could not read the request body: "+err.Error())
			return
		}
		if int64(len(body)) > o.MaxBodyBytes {
			g.Metrics.Rejected.Add(1)
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
		var head struct {
			Method string `json:"method"`
		}
		_ = json.Unmarshal(body, &head) // invalid JSON is answered by mcp-go with a parse error
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		start := time.Now()
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

func writeRPCError(w http.ResponseWriter, status, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{
		"jsonrpc": "2.0", "id": nil,
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

// relayEvents is an mcp-go EventStore that records nothing. It is there for
// its effect on the POST path: without an event store, mcp-go's
// notification forwarder can take a notification off the session channel
// just as the handler returns, find the request finished and drop it, so a
// find_tools response would sometimes lack notifications/tools/list_changed
// (and a relayed progress notification could be lost). With an event
// store, the request waits for the forwarder and every notification is
// written before the result. Events get no ids, so nothing is offered for
// resumption.
type relayEvents struct{}

var _ server.EventStore = relayEvents{}

func (relayEvents) StoreEvent(context.Context, string, string, json.RawMessage) (string, error) {
	return "", nil
}

func (relayEvents) ReplayEventsAfter(context.Context, string, string, func(string, json.RawMessage) error) (string, error) {
	return "", server.ErrUnknownEventID
}

func (relayEvents) PurgeSession(context.Context, string) error { return nil }
