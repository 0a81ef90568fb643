package gateway

// An upstream's own JSON-RPC error, handed on to the client intact.
//
// When an upstream answers a tools/call with a JSON-RPC error, the client
// gets the server's code, message and data, never only a sentence about
// them:
//   - a -32042 URL elicitation (MCP 2025-11-25) is answered as that same
//     JSON-RPC error to a client that declared URL elicitation, on a direct
//     call and on run_tool; any other client gets a tool error whose text
//     carries the URLs to open;
//   - every other error is a tool error (as before) whose _meta carries
//     the upstream's error under UpstreamErrorMeta, and a run_tools item
//     carries it in error_code and error_data.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// UpstreamErrorMeta is the _meta key of a tool error result that carries
// the upstream's JSON-RPC error: {"code", "message", "data"}.
const UpstreamErrorMeta = "io.toolrag/upstream_error"

// rpcFailure is a JSON-RPC error to answer a call with, as its server sent
// it. It unwraps to mcp-go's URLElicitationRequiredError for -32042, so
// mcp-go's own handler-error path answers it with that code and data too.
type rpcFailure struct {
	code    int
	message string
	data    json.RawMessage
	elicit  *mcp.URLElicitationRequiredError // -32042 with readable data
}

func (e *rpcFailure) Error() string { return e.message }

func (e *rpcFailure) Unwrap() error {
	if e.elicit != nil {
		return *e.elicit
	}
	return nil
}

// JSONRPCError is the error as the gateway's fast path writes it: the
// server's code, message and data byte for byte.
func (e *rpcFailure) JSONRPCError() mcp.JSONRPCError {
	var data any
	if len(e.data) > 0 {
		data = e.data
	}
	return mcp.JSONRPCError{JSONRPC: mcp.JSONRPC_VERSION, Error: mcp.NewJSONRPCErrorDetails(e.code, e.message, data)}
}

// upstreamRPC returns the upstream's JSON-RPC error inside err, or nil.
func upstreamRPC(err error) *rpcFailure {
	var re *upstream.RPCError
	if !errors.As(err, &re) {
		return nil
	}
	f := &rpcFailure{code: re.Code, message: re.Message, data: re.Data}
	if re.Code == mcp.URL_ELICITATION_REQUIRED && len(re.Data) > 0 {
		var d struct {
			Elicitations []mcp.ElicitationParams `json:"elicitations"`
		}
		if json.Unmarshal(re.Data, &d) == nil && len(d.Elicitations) > 0 {
			f.elicit = &mcp.URLElicitationRequiredError{Elicitations: d.Elicitations}
		}
	}
	return f
}

// failureResult is the tool error of a call its upstream answered with a
// JSON-RPC error: text for the agent, the error itself in _meta.
func failureResult(callName string, f *rpcFailure, text string) *mcp.CallToolResult {
	if f.elicit != nil {
		text = elicitationText(callName, f.elicit.Elicitations)
	}
	res := mcp.NewToolResultError(text)
	e := map[string]any{"code": f.code, "message": f.message}
	if len(f.data) > 0 {
		e["data"] = f.data
	}
	res.Meta = mcp.NewMetaFromMap(map[string]any{UpstreamErrorMeta: e})
	return res
}

// elicitationText words a URL elicitation for a client that cannot take
// the -32042 error: what to open, then call again.
func elicitationText(callName string, els []mcp.ElicitationParams) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s needs the user to open a link first, then call again:", callName)
	for _, e := range els {
		b.WriteString("\n- ")
		if e.Message != "" {
			b.WriteString(e.Message)
			b.WriteString(": ")
		}
		b.WriteString(e.URL)
	}
	return b.String()
}

// takesURLElicitation reports whether the client of ctx can be answered
// with a -32042 URL elicitation error: a session of protocol 2025-11-25
// whose client declared elicitation in URL mode. (On 2026-07-28 the code
// is reserved; such a client gets the tool error with the link.)
func takesURLElicitation(ctx context.Context) bool {
	if server.IsModernRequest(ctx) {
		return false
	}
	caps, known := clientCapabilities(ctx)
	return known && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// answer turns a call's outcome into what a tool handler returns: the
// upstream's -32042 as a JSON-RPC error where the client takes it, the
// result otherwise.
func answer(ctx context.Context, res *mcp.CallToolResult, f *rpcFailure) (*mcp.CallToolResult, error) {
	if f != nil && f.elicit != nil && takesURLElicitation(ctx) {
		return nil, f
	}
	return res, nil
}
