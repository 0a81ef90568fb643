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
// Two kinds of session state live inside mcp-go and cannot be read (whether
// a session's POSTs are answered as SSE, and the last activity its idle
// sweeper reads): internal/mcpfix.Sessions follows them, and a session is
// served here only while it knows them.
//
// Notifications sent during a call answered here (an upstream's log
// messages) are written before the result on the request's SSE stream, as
// mcp-go writes them, but when the call ends rather than as they come.
// notifications/cancelled cancels a call answered here (Server.Handler
// looks for it), and still goes to mcp-go for its own requests.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
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
	meta mcpfix.MetaDecoder
}

// newFastPath returns the fast path of a handler, or nil when the server
// has hooks it would have to run and does not.
func (g *Server) newFastPath(h *server.StreamableHTTPServer, ids SessionIDs) *fastPath {
	if hk := g.srv.GetHooks(); hk != nil && (len(hk.OnBeforeAny) > 0 || len(hk.OnSuccess) > 0 || len(hk.OnError) > 0 ||
		len(hk.OnBeforeCallTool) > 0 || len(hk.OnAfterCallTool) > 0) {
		return nil
	}
	info, err := mcpfix.ServerInfo(g.srv)
	if err != nil {
		g.log.Warn("tools/call is left to mcp-go", "error", err)
		return nil
	}
	return &fastPath{mcp: h, ids: ids, info: info}
}

// broadcast records that a notification may have reached every session
// (mcp-go announces list changes to all of them).
func (g *Server) broadcast() { g.sessions.Broadcast() }

// observe follows how mcp-go answers a request of a live session.
func (g *Server) observe(w http.ResponseWriter, r *http.Request, head *requestHead) http.ResponseWriter {
	return g.sessions.Observe(w, r, head.Method != "" && len(head.ID) > 0)
}

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
	if !canStream || r.Header.Get("Content-Type") != "application/json" || mcpfix.DNSRebinding(r) {
		return false
	}
	id, ok := mcpfix.RequestID(head.ID)
	if !ok {
		return false
	}
	name := *p.Name
	ctx := r.Context()
	principal := principalOf(ctx)
	hv := r.Header.Get(mcp.HeaderProtocolVersion)
	var sess *mcpfix.CallSession
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
		l, ok := g.sessions.Servable(sid, name, touchEvery)
		if !ok {
			return false
		}
		// mcp-go checks the session's owner on every POST.
		if _, err := fp.ids.For(principal).Validate(sid); err != nil {
			mcpfix.WriteInvalidSession(w)
			return true
		}
		sess = mcpfix.LiveCallSession(l)
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
		sess = mcpfix.ModernCallSession(info)
	}
	tool := mcpfix.FastTool(g.srv, name)
	if tool == nil {
		return false
	}
	if info.Modern && hasParamHeaders(&tool.Tool) {
		return false // mcp-go checks the Mcp-Param-* headers against the arguments
	}
	req, ok := mcpfix.NewCallToolRequest(name, p.Arguments, meta, r.Header)
	if !ok {
		return false
	}

	g.Metrics.FastCalls.Add(1)
	ctx = withRequestMethod(ctx, head.Method)
	ctx = g.srv.WithContext(ctx, sess)
	var resp mcp.JSONRPCMessage
	for _, hook := range g.srv.GetHooks().OnRequestInitialization {
		if err := hook(ctx, id, json.RawMessage(body)); err != nil {
			resp = mcpfix.ErrorResponse(id, mcp.INVALID_REQUEST, err.Error())
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
	mcpfix.WriteAnswer(w, flusher, sess, resp, info.Modern)
	return true
}

// runTool is mcp-go's handleToolCall for a tool fastCall found: the tool
// filter (the caller's policy), the handler behind server.WithRecovery, and
// the response HandleMessage builds.
func (g *Server) runTool(ctx context.Context, id any, tool *server.ServerTool, req mcp.CallToolRequest, info *server.RequestProtocolInfo, fp *fastPath) mcp.JSONRPCMessage {
	name := req.Params.Name
	if filtered := g.filterTools(ctx, []mcp.Tool{tool.Tool}); len(filtered) == 0 || filtered[0].Name != name {
		return mcpfix.ErrorResponse(id, mcp.INVALID_PARAMS, fmt.Errorf("tool '%s' not found: %w", name, server.ErrToolNotFound).Error())
	}
	result, err := mcpfix.CallRecovered(ctx, tool.Handler, req)
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
		return mcpfix.ErrorResponse(id, mcp.INTERNAL_ERROR, err.Error())
	}
	return mcpfix.ResultResponse(id, name, result, info.Modern, fp.info)
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
