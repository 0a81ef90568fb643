package mcpfix

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
)

// The pieces of mcp-go's tools/call answer that both server fast paths
// (Server here, and the gateway's Streamable HTTP path in pkg/gateway)
// share: the tool they may run, the request its handler gets, the handler
// run behind server.WithRecovery, and the response HandleMessage builds.

// FastTool returns the registered tool a fast path may call by name: one
// with a handler and no task execution (nil: mcp-go answers).
func FastTool(srv *server.MCPServer, name string) *server.ServerTool {
	tool := srv.GetTool(name)
	if tool == nil || tool.Handler == nil || tool.Tool.Execution != nil {
		return nil
	}
	return tool
}

// NewCallToolRequest is the request mcp-go hands a tool's handler for a
// tools/call of name with the raw arguments (false: they do not decode, and
// mcp-go answers).
func NewCallToolRequest(name string, args json.RawMessage, meta *mcp.Meta, header http.Header) (mcp.CallToolRequest, bool) {
	req := mcp.CallToolRequest{
		Request: mcp.Request{Method: string(mcp.MethodToolsCall)},
		Header:  header,
		Params:  mcp.CallToolParams{Name: name, Meta: meta},
	}
	if len(args) > 0 {
		req.Params.RawArguments = args
		if json.Unmarshal(args, &req.Params.Arguments) != nil {
			return req, false
		}
	}
	return req, true
}

// CallRecovered runs a tool handler as server.WithRecovery does.
func CallRecovered(ctx context.Context, h server.ToolHandlerFunc, req mcp.CallToolRequest) (result *mcp.CallToolResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic recovered in %s tool handler: %v", req.Params.Name, r)
		}
	}()
	return h(ctx, req)
}

// ResultResponse is the response mcp-go's HandleMessage builds for the
// result of tool name (an error when the handler returned none); on
// protocol 2026-07-28 (modern) the result is decorated as mcp-go's
// decorateResponse does, with serverInfo.
func ResultResponse(id any, name string, result *mcp.CallToolResult, modern bool, serverInfo mcp.Implementation) mcp.JSONRPCMessage {
	if result == nil {
		return ErrorResponse(id, mcp.INTERNAL_ERROR, fmt.Sprintf("tool '%s' handler returned no result", name))
	}
	if modern {
		if result.GetResultType() == "" {
			result.SetResultType(mcp.ResultTypeComplete)
		}
		if m := result.EnsureResultMeta(); m != nil && m.ServerInfo() == nil {
			m.SetServerInfo(serverInfo)
		}
	}
	return mcp.NewJSONRPCResultResponse(mcp.NewRequestId(id), result)
}

// ErrorResponse is a JSON-RPC error response as mcp-go builds it.
func ErrorResponse(id any, code int, message string) mcp.JSONRPCMessage {
	return mcp.JSONRPCError{
		JSONRPC: mcp.JSONRPC_VERSION,
		ID:      mcp.NewRequestId(id),
		Error:   mcp.NewJSONRPCErrorDetails(code, message, nil),
	}
}

// WriteAnswer writes resp as mcp-go's StreamableHTTPServer writes the
// answer to a POST: as SSE after the notifications of the call when there
// were any or the session is switched to SSE, else as one JSON document
// (2026-07-28 maps a JSON-RPC error to an HTTP status).
func WriteAnswer(w http.ResponseWriter, f http.Flusher, sess *CallSession, resp mcp.JSONRPCMessage, modern bool) {
	notes, sse := sess.drain()
	h := w.Header()
	if sse {
		h.Set("Content-Type", "text/event-stream")
		h.Set("Connection", "keep-alive")
		h.Set("Cache-Control", "no-cache")
		w.WriteHeader(http.StatusOK)
		for _, n := range notes {
			writeEvent(w, n)
			f.Flush()
		}
		writeEvent(w, resp)
		f.Flush()
		return
	}
	h.Set("Content-Type", "application/json")
	status := http.StatusOK
	if e, ok := resp.(mcp.JSONRPCError); ok && modern {
		status = httpStatusFor(e.Error.Code)
	}
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(resp)
}

func writeEvent(w http.ResponseWriter, msg any) {
	data, err := json.Marshal(msg)
	if err != nil {
		return
	}
	buf := make([]byte, 0, len(data)+24)
	buf = append(buf, "event: message\ndata: "...)
	buf = append(buf, data...)
	buf = append(buf, "\n\n"...)
	_, _ = w.Write(buf)
}

// httpStatusFor is the HTTP status protocol 2026-07-28 gives a JSON-RPC
// error (mcp-go's httpStatusForJSONRPCError).
func httpStatusFor(code int) int {
	switch code {
	case mcp.METHOD_NOT_FOUND:
		return http.StatusNotFound
	case mcp.HEADER_MISMATCH, mcp.MISSING_REQUIRED_CLIENT_CAPABILITY, mcp.UNSUPPORTED_PROTOCOL_VERSION,
		mcp.INVALID_REQUEST, mcp.INVALID_PARAMS, mcp.PARSE_ERROR:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// RequestID decodes a request id as mcp-go does (a number as float64, or
// a string); anything else is left to mcp-go.
func RequestID(raw json.RawMessage) (any, bool) {
	if len(raw) == 0 {
		return nil, false
	}
	// raw is one JSON value of a document that decoded: the common forms
	// are read without a decoder, as encoding/json would read them.
	switch c := raw[0]; {
	case c == '"' && len(raw) >= 2 && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw):
		return string(raw[1 : len(raw)-1]), true
	case c == '-' || (c >= '0' && c <= '9'):
		if f, err := strconv.ParseFloat(string(raw), 64); err == nil {
			return f, true
		}
	}
	var id any
	if json.Unmarshal(raw, &id) != nil {
		return nil, false
	}
	switch id.(type) {
	case float64, string:
		return id, true
	}
	return nil, false
}

// DNSRebinding reports whether mcp-go's DNS rebinding protection could
// refuse r (a loopback connection with a Host that is not): mcp-go answers.
func DNSRebinding(r *http.Request) bool { return httpserve.ForeignHostOnLoopback(r) }
