package mcpfix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// The client half: tools/call sent without mcp-go's per-request
// re-encoding.

// StatelessCaller sends tools/call on a stdio or Streamable HTTP connection
// that speaks the 2026-07-28 protocol without mcp-go's per-request
// re-encoding.
//
// On that protocol every request repeats the client's protocol version,
// identity and capabilities in _meta. mcp-go v1.2.1's client adds them to
// each request by marshalling the params, decoding them into a map,
// marshalling the _meta again, and then marshalling the params once more
// (and once more for the tool's name) to derive HTTP headers, which a
// stdio transport ignores; with the bigger
// request and result that roughly doubled the gateway's CPU per call over
// the 2025-11-25 protocol (docs/mcp-go-stateless-cost.md). Here the
// well-known _meta members are encoded once per connection and each
// request is written as one byte slice.
//
// What the request says is the same as what mcp-go would send (a test
// compares the two on the wire). A result that asks for input (a
// 2026-07-28 multi round-trip) is handed to mcp-go's CallTool, which runs
// the exchange from the start.
type StatelessCaller struct {
	wire transport.Interface
	meta []byte // `"key":value,...` of the well-known _meta members, no braces
	// rest is meta without the client capabilities, for a request that
	// declares other capabilities (CallTool's caps).
	rest    []byte
	ids     atomic.Int64
	version string

	// headers is set on Streamable HTTP, where a 2026-07-28 request also
	// carries Mcp-Method and Mcp-Name, and the parameters a tool annotates
	// with x-mcp-header as Mcp-Param-* headers, as mcp-go's client sends
	// them: for the tools listed on this connection (paramTools, name →
	// *mcp.Tool, only those with such annotations).
	headers    bool
	paramTools sync.Map
}

// NewStatelessCaller returns the caller for a connection on protocol
// version (nil when it is not a 2026-07-28 or later one), declaring the
// client info and capabilities the mcp-go client declares on it.
func NewStatelessCaller(wire transport.Interface, version string, info mcp.Implementation, caps mcp.ClientCapabilities) *StatelessCaller {
	if !mcp.IsModernProtocol(version) {
		return nil
	}
	members := []struct {
		key   string
		value any
	}{
		{mcp.MetaKeyClientCapabilities, caps},
		{mcp.MetaKeyClientInfo, info},
		{mcp.MetaKeyProtocolVersion, version},
	}
	var b bytes.Buffer
	rest := 0
	for i, m := range members {
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil
		}
		if i > 0 {
			b.WriteByte(',')
		}
		if i == 1 {
			rest = b.Len()
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	return &StatelessCaller{wire: wire, meta: b.Bytes(), rest: b.Bytes()[rest:], version: version}
}

// SendHeaders makes the caller send the HTTP headers of a 2026-07-28
// request (Streamable HTTP); call it before the first request.
func (s *StatelessCaller) SendHeaders() { s.headers = true }

// NoteTools records the tools of a tools/list page whose parameters go
// into headers (first page: a new listing replaces the old one), as mcp-go's
// client caches the tools it lists.
func (s *StatelessCaller) NoteTools(tools []mcp.Tool, first bool) {
	if !s.headers {
		return
	}
	if first {
		s.paramTools.Clear()
	}
	for i := range tools {
		if len(mcp.ExtractParamHeaderBindings(&tools[i])) > 0 {
			t := tools[i]
			s.paramTools.Store(t.Name, &t)
		}
	}
}

// header returns the HTTP headers of a tools/call with params (nil when the
// transport sends none).
func (s *StatelessCaller) header(name string, params json.RawMessage) http.Header {
	if !s.headers {
		return nil
	}
	std := mcp.StandardHeaders(s.version, mcp.MethodToolsCall, params)
	h := make(http.Header, len(std)+1)
	for k, v := range std {
		h.Set(k, v)
	}
	if t, ok := s.paramTools.Load(name); ok {
		for k, v := range mcp.GenerateParamHeaders(t.(*mcp.Tool), params) {
			h.Set(k, v)
		}
	}
	return h
}

// params encodes tools/call params: _meta (the connection's members plus
// the request's own, such as a progress token or log level), name,
// arguments, and the answers and state of a multi round-trip retry. caps,
// when set, replaces the connection's client capabilities.
func (s *StatelessCaller) params(p mcp.CallToolParams, caps *mcp.ClientCapabilities) (json.RawMessage, error) {
	buf := make([]byte, 0, 64+len(s.meta)+len(p.Name))
	buf = append(buf, `{"_meta":{`...)
	if caps != nil {
		c, err := json.Marshal(caps)
		if err != nil {
			return nil, err
		}
		k, _ := json.Marshal(mcp.MetaKeyClientCapabilities)
		buf = append(buf, k...)
		buf = append(buf, ':')
		buf = append(buf, c...)
		buf = append(buf, ',')
		buf = append(buf, s.rest...)
	} else {
		buf = append(buf, s.meta...)
	}
	if p.Meta != nil {
		var err error
		if buf, err = appendMembers(buf, p.Meta); err != nil {
			return nil, err
		}
	}
	buf = append(buf, `},"name":`...)
	name, err := json.Marshal(p.Name)
	if err != nil {
		return nil, err
	}
	buf = append(buf, name...)
	if p.Arguments != nil {
		args, err := json.Marshal(p.Arguments)
		if err != nil {
			return nil, err
		}
		buf = append(buf, `,"arguments":`...)
		buf = append(buf, args...)
	}
	if len(p.InputResponses) > 0 || p.RequestState != "" {
		if buf, err = appendMembers(buf, p.MultiRoundTripParams); err != nil {
			return nil, err
		}
	}
	buf = append(buf, '}')
	return buf, nil
}

// appendMembers appends the members of v, which encodes as a JSON object,
// to buf inside an object that already has members: a comma, then the
// members without their braces (nothing for {}).
func appendMembers(buf []byte, v any) ([]byte, error) {
	obj, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if len(obj) > 2 { // not {}
		buf = append(buf, ',')
		buf = append(buf, obj[1:len(obj)-1]...)
	}
	return buf, nil
}

// CallTool sends req and returns its result, as client.CallTool does.
// caps, when set, are the client capabilities the request declares instead
// of the connection's. A result asking for input (a multi round-trip) is
// returned as it is when passInput is set (the caller hands it on to its
// own client), else mcp-go's CallTool runs the exchange from the start,
// answering with the client's handlers.
func (s *StatelessCaller) CallTool(ctx context.Context, c *client.Client, req mcp.CallToolRequest, caps *mcp.ClientCapabilities, passInput bool) (*mcp.CallToolResult, error) {
	params, err := s.params(req.Params, caps)
	if err != nil {
		return nil, err
	}
	// String ids never collide with the mcp-go client's integer ones on
	// the same connection.
	id := mcp.NewRequestId("toolrag-" + strconv.FormatInt(s.ids.Add(1), 10))
	resp, err := s.wire.SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      id,
		Method:  string(mcp.MethodToolsCall),
		Params:  params,
		Header:  s.header(req.Params.Name, params),
	})
	if err != nil {
		if ctx.Err() != nil {
			s.cancel(ctx, id)
		}
		return nil, transport.NewError(err)
	}
	if resp == nil {
		return nil, transport.NewError(io.ErrUnexpectedEOF)
	}
	if resp.Error != nil {
		return nil, resp.Error.AsError()
	}
	res, err := parseCallToolResult(resp.Result)
	if err != nil {
		return nil, err
	}
	if res.NeedsInput() && !passInput {
		return c.CallTool(ctx, req)
	}
	return res, nil
}

// Request sends any other request on the connection, with the
// connection's _meta members and the 2026-07-28 headers, and returns its
// raw result (or the JSON-RPC error as an error).
func (s *StatelessCaller) Request(ctx context.Context, method mcp.MCPMethod, params map[string]any) (json.RawMessage, *mcp.JSONRPCErrorDetails, error) {
	body, err := json.Marshal(params)
	if err != nil {
		return nil, nil, err
	}
	buf := make([]byte, 0, len(body)+len(s.meta)+12)
	buf = append(buf, `{"_meta":{`...)
	buf = append(buf, s.meta...)
	buf = append(buf, '}')
	if len(body) > 2 {
		buf = append(buf, ',')
		buf = append(buf, body[1:]...)
	} else {
		buf = append(buf, '}')
	}
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, Method: string(method), Params: json.RawMessage(buf),
		ID: mcp.NewRequestId("toolrag-" + strconv.FormatInt(s.ids.Add(1), 10))}
	if s.headers {
		req.Header = http.Header{}
		for k, v := range mcp.StandardHeaders(s.version, method, buf) {
			req.Header.Set(k, v)
		}
	}
	resp, err := s.wire.SendRequest(ctx, req)
	if err != nil {
		return nil, nil, transport.NewError(err)
	}
	if resp == nil {
		return nil, nil, transport.NewError(io.ErrUnexpectedEOF)
	}
	if resp.Error != nil {
		return nil, resp.Error, nil
	}
	return resp.Result, nil, nil
}

// parseCallToolResult decodes a tools/call result as mcp.ParseCallToolResult
// does, in one pass over the bytes instead of two (it first decodes a probe
// for "content"): only a result that comes without content (rare: an
// error, or a multi round-trip request for input) goes through mcp-go's
// function, which words the error.
func parseCallToolResult(raw json.RawMessage) (*mcp.CallToolResult, error) {
	var res mcp.CallToolResult
	if err := json.Unmarshal(raw, &res); err != nil {
		return nil, fmt.Errorf("failed to unmarshal response: %w", err)
	}
	if len(res.Content) == 0 {
		return mcp.ParseCallToolResult(&raw)
	}
	return &res, nil
}

// cancel tells the server that the request id is abandoned, as mcp-go's
// client does over stdio (the protocol's only way to cancel there).
func (s *StatelessCaller) cancel(ctx context.Context, id mcp.RequestId) {
	n := mcp.JSONRPCNotification{
		JSONRPC: mcp.JSONRPC_VERSION,
		Notification: mcp.Notification{
			Method: string(mcp.MethodNotificationCancelled),
			Params: mcp.NotificationParams{AdditionalFields: map[string]any{"requestId": id, "reason": ctx.Err().Error()}},
		},
	}
	ctx = context.WithoutCancel(ctx)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, cancelNotificationTimeout)
		defer cancel()
		_ = s.wire.SendNotification(ctx, n)
	}()
}

// cancelNotificationTimeout bounds the sending of notifications/cancelled.
const cancelNotificationTimeout = 5 * time.Second
