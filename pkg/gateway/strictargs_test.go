package gateway

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestMetaToolsRefuseUnknownFields: every meta-tool's schema says
// additionalProperties: false, and a call with an unknown field is refused
// naming it (before, find_tools {"query": "x", "allowed_servers": [...]}
// silently ignored the field the caller thought narrowed the search).
func TestMetaToolsRefuseUnknownFields(t *testing.T) {
	g := &Server{cfg: Config{Planner: planFunc(nil)}}
	tools := map[string]func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error){}
	for _, st := range g.metaTools() {
		tools[st.Tool.Name] = st.Handler
	}
	tests := []struct {
		tool string
		args map[string]any
		want string
	}{
		{ToolFind, map[string]any{"query": "x", "allowed_servers": []any{"a"}}, `unknown field "allowed_servers" (known here: include_schema, max_tokens, queries, query, top_k)`},
		{ToolFind, map[string]any{"query": "x", "topk": 3, "Query": "y"}, `unknown fields "Query", "topk"`},
		{ToolDescribe, map[string]any{"call_name": "a__b", "verbose": true}, `unknown field "verbose"`},
		{ToolRun, map[string]any{"call_name": "a__b", "args": map[string]any{}}, `unknown field "args" (known here: arguments, call_name)`},
		{ToolRunMany, map[string]any{"calls": []any{map[string]any{"call_name": "a__b"}, map[string]any{"call_name": "a__b", "argumets": map[string]any{}}}}, `unknown field "calls[1].argumets"`},
		{ToolPlan, map[string]any{"query": "x", "dry_run": true}, `unknown field "dry_run"`},
	}
	for _, tt := range tests {
		req := mcp.CallToolRequest{}
		req.Params.Name = tt.tool
		req.Params.Arguments = tt.args
		res, err := tools[tt.tool](context.Background(), req)
		if err != nil || res == nil || !res.IsError {
			t.Errorf("%s %v: %v %+v, want an invalid-params error", tt.tool, tt.args, err, res)
			continue
		}
		got := res.Content[0].(mcp.TextContent).Text
		if !strings.Contains(got, "invalid params for "+tt.tool) || !strings.Contains(got, tt.want) {
			t.Errorf("%s: %q, want it to contain %q", tt.tool, got, tt.want)
		}
	}
}

type planFunc func()

func (planFunc) Plan(context.Context, string, []PlanCandidate) (json.RawMessage, error) {
	return nil, nil
}
