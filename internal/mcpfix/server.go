// The server half: stateless (2026-07-28) tools/call requests answered
// without mcp-go's per-request re-decoding, for servers/echo (stdio) and,
// through the same pieces (MetaDecoder, NewCallToolRequest, FastTool,
// Respond), for the gateway's own Streamable HTTP path.
//
// mcp-go v1.2.1's server decodes the _meta of each 2026-07-28 request three
// times into map[string]any and re-encodes and decodes the client's
// identity and capabilities out of it again (extractRequestProtocolInfo, the
// trace propagation, the method's own params): about twice the CPU per call
// of the 2025-11-25 protocol (docs/mcp-go-stateless-cost.md). Here the
// message is decoded once, into typed values, and the tool's handler runs
// with the same request, context values and response decoration as mcp-go
// gives it; the response is encoded by the same types, so it is byte for
// byte what mcp-go writes (TestSameResponses).
//
// Only the common case takes this path: a well-formed tools/call carrying
// nothing but _meta (with the protocol version, client identity and
// capabilities, log level and progress token), name and arguments, of a tool
// registered on the server (not a session or task tool), on a server with no
// request or tool-call hooks. Anything else (a legacy request, an unknown
// _meta key such as trace context, a task, a multi round-trip retry, an
// unknown tool, malformed input) goes to mcp-go unchanged.
//
// mcp-go's server options that cannot be seen from outside it (tool handler
// middleware other than WithRecovery, tool filters, input and output schema
// validation, tracing, request logging) are not reproduced: use Server
// only with servers built without them. Config.Recover mirrors
// server.WithRecovery.

package mcpfix

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Config configures a Server.
type Config struct {
	// Server is the mcp-go server whose tools are called.
	Server *server.MCPServer
	// Recover turns a panicking handler into an error response, as the
	// server.WithRecovery option does; set it when Server was built with it.
	Recover bool
}

// Server answers the stateless tools/call requests of one mcp-go server.
type Server struct {
	srv     *server.MCPServer
	recover bool
	info    mcp.Implementation // serverInfo mcp-go stamps on modern results

	captureMu sync.Mutex                           // one BaseContext at a time
	captured  atomic.Pointer[chan context.Context] // set while BaseContext asks

	meta MetaDecoder
}

// MetaDecoder decodes the _meta of stateless (2026-07-28) requests into
// typed values. It remembers the last client identity and capabilities it
// decoded: a client repeats the same bytes on every request. The zero value
// is ready to use; it is safe for concurrent use.
type MetaDecoder struct {
	lastInfo atomic.Pointer[decoded[mcp.Implementation]]
	lastCaps atomic.Pointer[decoded[mcp.ClientCapabilities]]
}

// decoded is a _meta value and the bytes it was decoded from.
type decoded[T any] struct {
	raw   []byte
	value T
}

// decodeCached decodes raw into a new *T, reusing the value last decoded
// from the same bytes (a shallow copy, so that each request has its own).
// A JSON null gives nil.
func decodeCached[T any](last *atomic.Pointer[decoded[T]], raw []byte) (*T, error) {
	if d := last.Load(); d != nil && bytes.Equal(d.raw, raw) {
		v := d.value
		return &v, nil
	}
	var v *T
	if err := json.Unmarshal(raw, &v); err != nil || v == nil {
		return nil, err
	}
	last.Store(&decoded[T]{raw: raw, value: *v})
	return v, nil
}

// captureMethod is the notification New registers on the mcp-go server to
// obtain a context carrying the server (server.ServerFromContext), as
// mcp-go's handlers get it.
const captureMethod = "notifications/toolrag/statelesscall-context"

// New returns the fast path for cfg.Server. It asks the server who it is
// (server/discover) so that results carry the same serverInfo mcp-go stamps
// on them.
func New(cfg Config) (*Server, error) {
	if cfg.Server == nil {
		return nil, errors.New("mcpfix: no server")
	}
	s := &Server{srv: cfg.Server, recover: cfg.Recover}
	info, err := ServerInfo(cfg.Server)
	if err != nil {
		return nil, err
	}
	s.info = info
	cfg.Server.AddNotificationHandler(captureMethod, func(ctx context.Context, _ mcp.JSONRPCNotification) {
		if ch := s.captured.Load(); ch != nil {
			select {
			case *ch <- ctx:
			default:
			}
		}
	})
	return s, nil
}

// ServerInfo asks srv who it is (server/discover), for the serverInfo mcp-go
// stamps on every 2026-07-28 result (its own serverImplementation is not
// exported).
func ServerInfo(srv *server.MCPServer) (mcp.Implementation, error) {
	var info mcp.Implementation
	probe := `{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{"_meta":{"` +
		mcp.MetaKeyProtocolVersion + `":"` + mcp.LATEST_PROTOCOL_VERSION + `","` +
		mcp.MetaKeyClientCapabilities + `":{}}}}`
	out, err := json.Marshal(srv.HandleMessage(context.Background(), json.RawMessage(probe)))
	if err != nil {
		return info, fmt.Errorf("mcpfix: asking the server who it is: %w", err)
	}
	var resp struct {
		Result struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"result"`
	}
	if err := json.Unmarshal(out, &resp); err != nil {
		return info, fmt.Errorf("mcpfix: reading the server's discover result: %w", err)
	}
	raw, ok := resp.Result.Meta[mcp.MetaKeyServerInfo]
	if !ok {
		return info, fmt.Errorf("mcpfix: the server's discover result has no serverInfo: %s", out)
	}
	if err := json.Unmarshal(raw, &info); err != nil {
		return info, fmt.Errorf("mcpfix: reading the server's serverInfo: %w", err)
	}
	return info, nil
}

// BaseContext returns ctx with the values mcp-go adds to every message it
// handles (the server itself, for server.ServerFromContext). Compute it
// once per connection: ctx should already carry the client session
// (MCPServer.WithContext), as the transport's context does.
func (s *Server) BaseContext(ctx context.Context) context.Context {
	s.captureMu.Lock()
	defer s.captureMu.Unlock()
	ch := make(chan context.Context, 1)
	s.captured.Store(&ch)
	defer s.captured.Store(nil)
	s.srv.HandleMessage(ctx, json.RawMessage(`{"jsonrpc":"2.0","method":"`+captureMethod+`"}`))
	select {
	case c := <-ch:
		return c
	default:
		return ctx
	}
}

// Call is a decoded tools/call request the fast path answers.
type Call struct {
	id      any
	req     mcp.CallToolRequest
	info    server.RequestProtocolInfo
	handler server.ToolHandlerFunc
}

// wireRequest is a tools/call request with every member mcp-go reads:
// those the fast path does not handle (result, task, the multi round-trip
// retry's) send the message to mcp-go; others mcp-go ignores as well.
type wireRequest struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      any             `json:"id"`
	Method  string          `json:"method"`
	Params  *wireParams     `json:"params"`
	Result  json.RawMessage `json:"result"`
}

type wireParams struct {
	Meta           map[string]json.RawMessage `json:"_meta"`
	Name           string                     `json:"name"`
	Arguments      json.RawMessage            `json:"arguments"`
	Task           json.RawMessage            `json:"task"`
	InputResponses json.RawMessage            `json:"inputResponses"`
	RequestState   json.RawMessage            `json:"requestState"`
}

var toolsCall = []byte(`"tools/call"`)

// Prepare decodes msg and returns the call when the fast path answers it
// (nil: hand msg to mcp-go's HandleMessage). header is the HTTP request's
// header (nil on stdio).
func (s *Server) Prepare(ctx context.Context, msg []byte, header http.Header) *Call {
	if !bytes.Contains(msg, toolsCall) || s.hooked() {
		return nil
	}
	var w wireRequest
	if json.Unmarshal(msg, &w) != nil || w.Result != nil {
		return nil
	}
	if w.JSONRPC != mcp.JSONRPC_VERSION || w.Method != string(mcp.MethodToolsCall) || w.Params == nil || w.Params.Meta == nil ||
		w.Params.Task != nil || w.Params.InputResponses != nil || w.Params.RequestState != nil {
		return nil
	}
	switch w.ID.(type) {
	case float64, string:
	default:
		return nil
	}
	c := &Call{id: w.ID}
	meta, ok := s.meta.Decode(w.Params.Meta, &c.info)
	if !ok {
		return nil
	}
	if header != nil && header.Get(mcp.HeaderProtocolVersion) != "" {
		// mcp-go then checks the standard headers against the body.
		return nil
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		if st, ok := sess.(server.SessionWithTools); ok {
			if _, shadowed := st.GetSessionTools()[w.Params.Name]; shadowed {
				return nil
			}
		}
	}
	tool := FastTool(s.srv, w.Params.Name)
	if tool == nil {
		return nil
	}
	c.handler = tool.Handler
	if header == nil {
		header = make(http.Header)
	}
	if c.req, ok = NewCallToolRequest(w.Params.Name, w.Params.Arguments, meta, header); !ok {
		return nil
	}
	return c
}

// Decode decodes a modern request's _meta into info and the mcp.Meta the
// handler gets (typed values, which mcp.Meta's accessors accept), reporting
// false when the request is not a well-formed modern one (a legacy or
// unsupported version, no client capabilities) or carries a key other than
// the protocol version, client identity and capabilities, log level and
// progress token: mcp-go must answer those.
func (s *MetaDecoder) Decode(raw map[string]json.RawMessage, info *server.RequestProtocolInfo) (*mcp.Meta, bool) {
	meta := &mcp.Meta{AdditionalFields: make(map[string]any, len(raw))}
	for k, v := range raw {
		var err error
		switch k {
		case mcp.MetaKeyProtocolVersion:
			err = json.Unmarshal(v, &info.ProtocolVersion)
			meta.AdditionalFields[k] = info.ProtocolVersion
		case mcp.MetaKeyClientInfo:
			var ci *mcp.Implementation
			ci, err = decodeCached(&s.lastInfo, v)
			info.ClientInfo = ci
			meta.AdditionalFields[k] = ci
		case mcp.MetaKeyClientCapabilities:
			var cc *mcp.ClientCapabilities
			cc, err = decodeCached(&s.lastCaps, v)
			info.ClientCapabilities = cc
			meta.AdditionalFields[k] = cc
		case mcp.MetaKeyLogLevel:
			err = json.Unmarshal(v, &info.LogLevel)
			meta.AdditionalFields[k] = info.LogLevel
		case "progressToken":
			err = json.Unmarshal(v, &meta.ProgressToken)
		default:
			return nil, false
		}
		if err != nil {
			return nil, false
		}
	}
	info.Modern = true
	if !mcp.IsModernProtocol(info.ProtocolVersion) || !mcp.IsValidProtocolVersion(info.ProtocolVersion) || info.ClientCapabilities == nil {
		return nil, false
	}
	return meta, true
}

// hooked reports whether the server has hooks a tools/call would run.
func (s *Server) hooked() bool {
	h := s.srv.GetHooks()
	if h == nil {
		return false
	}
	return len(h.OnBeforeAny) > 0 || len(h.OnSuccess) > 0 || len(h.OnError) > 0 ||
		len(h.OnRequestInitialization) > 0 || len(h.OnBeforeCallTool) > 0 || len(h.OnAfterCallTool) > 0
}

// Run calls the tool and returns the encoded response (without a trailing
// newline). ctx should derive from BaseContext; Run adds the request's
// protocol information and applies it to the client session, as mcp-go
// does.
func (s *Server) Run(ctx context.Context, c *Call) []byte {
	info := c.info
	ctx = server.WithRequestProtocolInfo(ctx, &info)
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		if withInfo, ok := sess.(server.SessionWithClientInfo); ok {
			if info.ClientInfo != nil {
				withInfo.SetClientInfo(*info.ClientInfo)
			}
			withInfo.SetClientCapabilities(*info.ClientCapabilities)
		}
		if !sess.Initialized() {
			sess.Initialize()
		}
	}
	out, err := json.Marshal(s.respond(ctx, c))
	if err != nil {
		out, _ = json.Marshal(ErrorResponse(c.id, mcp.INTERNAL_ERROR, err.Error()))
	}
	return out
}

// respond runs the handler and builds the response mcp-go's HandleMessage
// would return.
func (s *Server) respond(ctx context.Context, c *Call) (resp mcp.JSONRPCMessage) {
	defer func() {
		// mcp-go's stdio worker recovers what the handler's own
		// recovery (WithRecovery) did not.
		if r := recover(); r != nil {
			resp = ErrorResponse(c.id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal panic: %v", r))
		}
	}()
	var result *mcp.CallToolResult
	var err error
	if s.recover {
		result, err = CallRecovered(ctx, c.handler, c.req)
	} else {
		result, err = c.handler(ctx, c.req)
	}
	if err != nil {
		return ErrorResponse(c.id, mcp.INTERNAL_ERROR, err.Error())
	}
	return ResultResponse(c.id, c.req.Params.Name, result, true, s.info)
}
