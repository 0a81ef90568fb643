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
	wire    transport.Interface
	meta    []byte // `"key":value,...` of the well-known _meta members, no braces
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
	for i, m := range members {
		k, _ := json.Marshal(m.key)
		v, err := json.Marshal(m.value)
		if err != nil {
			return nil
		}
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	return &StatelessCaller{wire: wire, meta: b.Bytes(), version: version}
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
// the request's own, such as a progress token or log level), name and
// arguments.
func (s *StatelessCaller) params(p mcp.CallToolParams) (json.RawMessage, error) {
	buf := make([]byte, 0, 64+len(s.meta)+len(p.Name))
	buf = append(buf, `{"_meta":{`...)
	buf = append(buf, s.meta...)
	if p.Meta != nil {
		own, err := json.Marshal(p.Meta)
		if err != nil {
			return nil, err
		}
		if len(own) > 2 { // not {}
			buf = append(buf, ',')
			buf = append(buf, own[1:len(own)-1]...)
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
	buf = append(buf, '}')
	return buf, nil
}

// CallTool sends req and returns its result, as client.CallTool does.
func (s *StatelessCaller) CallTool(ctx context.Context, c *client.Client, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	params, err := s.params(req.Params)
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
	if res.NeedsInput() {
		return c.CallTool(ctx, req)
	}
	return res, nil
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
