package testenv

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// AskingServer is a 2026-07-28 MCP server whose "confirm" tool asks the
// user (elicitation) and, when the client declared sampling, its LLM before
// it acts, with an input_required result. Its own requestState
// ("asked:<item>") must come back on the retry, or the tool says so.
func AskingServer() *server.MCPServer {
	s := server.NewMCPServer("asking", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcp.NewTool("confirm", mcp.WithDescription("Delete an item after the user confirms."), mcp.WithString("item", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			item := req.GetString("item", "")
			if ok := server.ElicitationResponse(req.Params.InputResponses, "ok"); ok != nil {
				if req.Params.RequestState != "asked:"+item {
					return mcp.NewToolResultErrorf("my state came back as %q", req.Params.RequestState), nil
				}
				said := "no llm"
				if llm := server.SamplingResponse(req.Params.InputResponses, "llm"); llm != nil {
					c, _ := mcp.ParseSamplingContent(llm.Content)
					tc, _ := c.(mcp.TextContent)
					said = "llm said " + tc.Text
				}
				return mcp.NewToolResultText(fmt.Sprintf("deleted %s (user: %s; %s)", item, ok.Action, said)), nil
			}
			b := server.NewInputRequestBuilder("asked:"+item).Elicit("ok", mcp.ElicitationParams{
				Message:         "Delete " + item + "?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"sure": map[string]any{"type": "boolean"}}},
			})
			if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.ClientCapabilities != nil && info.ClientCapabilities.Sampling != nil {
				b.Sample("llm", mcp.CreateMessageParams{Messages: []mcp.SamplingMessage{{Role: mcp.RoleUser,
					Content: mcp.NewTextContent("is deleting " + item + " wise?")}}, MaxTokens: 5})
			}
			return b.ToolResult(), nil
		})
	return s
}

// AskingYes answers both of AskingServer's input requests.
var AskingYes = map[string]any{"ok": map[string]any{"action": "accept", "content": map[string]any{"sure": true}},
	"llm": map[string]any{"role": "assistant", "content": map[string]any{"type": "text", "text": "fine"}, "model": "m"}}

// ModernCall is a 2026-07-28 tools/call as a client writes it: no session;
// the protocol version, client info and per-request capabilities in _meta;
// on a retry inputResponses and requestState.
type ModernCall struct {
	ID        int
	Tool      string
	Args      map[string]any
	Caps      string // JSON; "" = {}
	Responses map[string]any
	State     string
}

// Body is the request's JSON-RPC body.
func (c ModernCall) Body() string {
	caps := c.Caps
	if caps == "" {
		caps = "{}"
	}
	params := map[string]any{"name": c.Tool, "arguments": c.Args, "_meta": map[string]any{
		mcp.MetaKeyProtocolVersion:    mcp.LATEST_PROTOCOL_VERSION,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-2026", "version": "1"},
		mcp.MetaKeyClientCapabilities: json.RawMessage(caps),
	}}
	if c.Responses != nil {
		params["inputResponses"] = c.Responses
	}
	if c.State != "" {
		params["requestState"] = c.State
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.ID, "method": "tools/call", "params": params})
	return string(body)
}

// Headers are the HTTP headers a 2026-07-28 tools/call carries.
func (c ModernCall) Headers() map[string]string {
	return map[string]string{mcp.HeaderProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		mcp.HeaderMethod: string(mcp.MethodToolsCall), mcp.HeaderName: c.Tool}
}

// ToolResult is what a client reads of a tools/call result.
type ToolResult struct {
	ResultType    string                     `json:"resultType"`
	InputRequests map[string]json.RawMessage `json:"inputRequests"`
	RequestState  string                     `json:"requestState"`
	IsError       bool                       `json:"isError"`
	Content       []struct {
		Text string `json:"text"`
	} `json:"content"`
}

// Text joins the result's text content.
func (r ToolResult) Text() string {
	var out string
	for i, c := range r.Content {
		if i > 0 {
			out += "\n"
		}
		out += c.Text
	}
	return out
}

// ModernRequest is a 2026-07-28 request (no session) as a client writes
// it: the body of JSON-RPC request id (params with the protocol version,
// client info and empty capabilities in _meta) and its HTTP headers (name
// is the Mcp-Name header's tool or resource, "" for none).
func ModernRequest(id int, method, name string, params map[string]any) (body string, hdr map[string]string) {
	p := map[string]any{"_meta": map[string]any{mcp.MetaKeyProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		mcp.MetaKeyClientInfo: map[string]any{"name": "raw-2026", "version": "1"}, mcp.MetaKeyClientCapabilities: map[string]any{}}}
	for k, v := range params {
		p[k] = v
	}
	raw, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": p})
	hdr = map[string]string{mcp.HeaderProtocolVersion: mcp.LATEST_PROTOCOL_VERSION, mcp.HeaderMethod: method}
	if name != "" {
		hdr[mcp.HeaderName] = name
	}
	return string(raw), hdr
}
