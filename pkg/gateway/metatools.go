package gateway

// The meta-tools: find_tools, describe_tool, run_tool, run_tools and plan.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"sync"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// Meta-tool names.
const (
	ToolFind     = "find_tools"
	ToolDescribe = "describe_tool"
	ToolRun      = "run_tool"
	ToolRunMany  = "run_tools"
	ToolPlan     = "plan"
)

func isMeta(name string) bool {
	switch name {
	case ToolFind, ToolDescribe, ToolRun, ToolRunMany, ToolPlan:
		return true
	}
	return false
}

func (g *Server) metaTools() []server.ServerTool {
	ro := mcp.ToolAnnotation{ReadOnlyHint: mcp.ToBoolPtr(true), OpenWorldHint: mcp.ToBoolPtr(false)}
	tools := []server.ServerTool{
		{Tool: mcp.Tool{
			Name: ToolFind,
			Description: "Search the catalog of available tools by what you want to do. Ask for one capability per query, and list every capability your task needs in `queries`, including the implied steps " +
				"(e.g. task 'screenshot the pricing page and save it' → queries ['open a web page', 'take a screenshot', 'write a file']; task 'email Bob tomorrow's forecast' → ['weather forecast', 'current date', 'send an email']). " +
				"Returns, per query, the best matching tools with their call_name, description, input_schema, a match level (strong, partial or weak) and related tools usually needed with them. Call this first, then execute a tool with run_tool.",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{
"query":{"type":"string","description":"One capability you need, in plain words (e.g. 'create a GitHub issue', 'weather forecast for a city')."},
"queries":{"type":"array","minItems":1,"maxItems":8,"items":{"type":"string"},"description":"Several capabilities at once, one short query each, including the steps the task implies (e.g. ['navigate to a web page', 'take a screenshot of the page', 'save a file to disk']). Results come back grouped per query."},
"top_k":{"type":"integer","minimum":1,"maximum":50,"description":"How many tools to return per query (default 5)."},
"include_schema":{"type":"boolean","description":"Include each tool's input_schema (default true). Use false for a lighter list, then describe_tool."},
"max_tokens":{"type":"integer","minimum":1,"description":"Return as many of the best tools as fit in this many tokens (estimated as bytes/4), shared by all queries."}},
"additionalProperties":false}`),
			Annotations: ro,
		}, Handler: g.handleFind},
		{Tool: mcp.Tool{
			Name:        ToolDescribe,
			Description: "Return one tool's full description and input_schema by its call_name (as returned by find_tools).",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{
"call_name":{"type":"string","description":"The tool's call_name, e.g. 'github__create_issue'."}},
"required":["call_name"],"additionalProperties":false}`),
			Annotations: ro,
		}, Handler: g.handleDescribe},
		{Tool: mcp.Tool{
			Name:        ToolRun,
			Description: "Execute one tool by its call_name with arguments matching its input_schema.",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{
"call_name":{"type":"string","description":"The tool's call_name from find_tools."},
"arguments":{"type":"object","description":"Arguments for the tool, matching its input_schema."}},
"required":["call_name"],"additionalProperties":false}`),
		}, Handler: g.handleRun},
		{Tool: mcp.Tool{
			Name:        ToolRunMany,
			Description: "Execute several independent tool calls in parallel. One failing call does not stop the others; each result carries its call's id.",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{
"calls":{"type":"array","minItems":1,"items":{"type":"object","properties":{
"call_name":{"type":"string"},"arguments":{"type":"object"},"id":{"type":"string","description":"Your id for this call, echoed in its result (default: its position)."}},
"required":["call_name"],"additionalProperties":false}},
"max_concurrency":{"type":"integer","minimum":1,"description":"Upper bound on parallel calls (capped by the gateway)."}},
"required":["calls"],"additionalProperties":false}`),
		}, Handler: g.handleRunMany},
	}
	if g.cfg.Planner != nil {
		tools = append(tools, server.ServerTool{Tool: mcp.Tool{
			Name:        ToolPlan,
			Description: "Propose a multi-step plan for a task using the available tools. Advisory only: it executes nothing; run the steps with run_tool / run_tools.",
			RawInputSchema: json.RawMessage(`{"type":"object","properties":{
"query":{"type":"string","description":"The task to plan."},
"top_k":{"type":"integer","minimum":1,"maximum":50,"description":"How many candidate tools to consider (default 10)."}},
"required":["query"],"additionalProperties":false}`),
			Annotations: ro,
		}, Handler: g.handlePlan})
	}
	for i := range tools {
		tools[i] = strictArgs(tools[i])
	}
	return tools
}

// ---- filters (policy on listing and at call time) ----

func (g *Server) handleRun(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	callName, err := stringArg(args, "call_name", true)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if isMeta(callName) {
		return mcp.NewToolResultErrorf("run_tool cannot run the meta-tool %q; call it directly", callName), nil
	}
	if g.tools.Load().appOnlyTool(callName) {
		return appOnlyRefusal(callName), nil
	}
	toolArgs, err := objectArg(args, "arguments")
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	ctx = withRetry(ctx, req.Params.MultiRoundTripParams)
	res, f := g.call(tracing.WithClientMeta(g.relayProgress(g.withRelay(ctx), req), req.Params.Meta), callName, toolArgs)
	return answer(ctx, res, f)
}

type runCall struct {
	CallName  string         `json:"call_name"`
	Arguments map[string]any `json:"arguments,omitempty"`
	ID        string         `json:"id,omitempty"`
}

type runResult struct {
	ID       string              `json:"id"`
	CallName string              `json:"call_name"`
	OK       bool                `json:"ok"`
	Result   *mcp.CallToolResult `json:"result,omitempty"`
	Error    string              `json:"error,omitempty"`
	// ErrorCode and ErrorData are the upstream's own JSON-RPC error, when
	// it answered the call with one (e.g. -32042 and its elicitations).
	ErrorCode int             `json:"error_code,omitempty"`
	ErrorData json.RawMessage `json:"error_data,omitempty"`
	// Status is 429 for a call refused by the key's rate limit.
	Status int `json:"status,omitempty"`
}

func (g *Server) handleRunMany(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	raw, ok := args["calls"]
	if !ok {
		return mcp.NewToolResultError("calls is required: a list of {call_name, arguments, id}"), nil
	}
	b, _ := json.Marshal(raw)
	var calls []runCall
	if err := json.Unmarshal(b, &calls); err != nil {
		return mcp.NewToolResultErrorf("calls must be a list of {call_name: string, arguments: object, id: string}: %v", err), nil
	}
	if len(calls) == 0 {
		return mcp.NewToolResultError("calls must not be empty"), nil
	}
	if len(calls) > g.cfg.MaxBatch {
		return mcp.NewToolResultErrorf("too many calls: %d exceeds the run_tools batch limit of %d", len(calls), g.cfg.MaxBatch), nil
	}
	conc := g.cfg.MaxParallel
	if v, ok := args["max_concurrency"]; ok {
		n, isNum := v.(float64)
		if !isNum || n < 1 || n != float64(int(n)) {
			return mcp.NewToolResultError("max_concurrency must be a positive integer"), nil
		}
		conc = min(conc, int(n))
	}
	// Each call of a batch costs one rate-limit token of the key; the
	// request itself paid for the first. Calls beyond the tokens left are
	// refused one by one (429), not run.
	allowed, wait := auth.TakeTokens(ctx, len(calls)-1)
	results := make([]runResult, len(calls))
	sem := make(chan struct{}, conc)
	rctx := tracing.WithClientMeta(g.withRelay(ctx), req.Params.Meta)
	var wg sync.WaitGroup
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprint(i)
		}
		results[i] = runResult{ID: id, CallName: c.CallName}
		if i > allowed {
			results[i].Status = http.StatusTooManyRequests
			results[i].Error = fmt.Sprintf("rate limit exceeded: each call of a run_tools batch costs one of the key's rate-limit tokens, and this one is beyond those left; retry in %ds", int(math.Ceil(wait.Seconds())))
			continue
		}
		if c.CallName == "" || isMeta(c.CallName) {
			results[i].Error = "call_name must name a catalog tool from find_tools"
			continue
		}
		if g.tools.Load().appOnlyTool(c.CallName) {
			results[i].Error = resultText(appOnlyRefusal(c.CallName))
			continue
		}
		wg.Add(1)
		go func(i int, c runCall) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i].Error = "cancelled: " + ctx.Err().Error()
				return
			}
			defer func() { <-sem }()
			res, f := g.call(rctx, c.CallName, c.Arguments)
			if res.IsError {
				results[i].Error = resultText(res)
				if f != nil {
					results[i].ErrorCode, results[i].ErrorData = f.code, f.data
				}
				return
			}
			results[i].OK = true
			results[i].Result = res
		}(i, c)
	}
	wg.Wait()
	failed := 0
	for _, r := range results {
		if !r.OK {
			failed++
		}
	}
	out := map[string]any{"results": results, "succeeded": len(results) - failed, "failed": failed}
	return structured(out), nil
}

// ---- discovery ----

type foundTool struct {
	CallName    string          `json:"call_name"`
	Server      string          `json:"server"`
	Description string          `json:"description"`
	Score       float64         `json:"score"`
	Match       string          `json:"match,omitempty"`
	ToolType    string          `json:"tool_type,omitempty"`
	Status      string          `json:"status,omitempty"`
	Related     []string        `json:"related,omitempty"`
	InputSchema json.RawMessage `json:"input_schema,omitempty"`
	// NeedsConnection: the server acts as each caller, and this caller
	// has not connected it yet; ConnectURL is the link to do so.
	NeedsConnection bool   `json:"needs_connection,omitempty"`
	ConnectURL      string `json:"connect_url,omitempty"`
	// OutputSchema is the upstream's outputSchema, with include_schema.
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
}

func (g *Server) handleFind(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	queries, grouped, err := queriesArg(args, g.cfg.MaxQueryChars)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	query := queries[0]
	topK, err := intArg(args, "top_k", 5, 1, g.cfg.MaxTopK)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	maxTokens, err := intArg(args, "max_tokens", 0, 1, 1<<30)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	includeSchema, err := boolArg(args, "include_schema", true)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if grouped {
		return g.handleFindGroups(ctx, queries, topK, maxTokens, includeSchema), nil
	}
	pol, _ := policy.FromContext(ctx)
	g.Metrics.Finds.Add(1)
	want := topK
	if maxTokens > 0 {
		want = g.cfg.MaxTopK // fill the budget from the best candidates
	}
	resp, err := g.cfg.Retriever.Retrieve(ctx, retrieve.Request{Query: query, TopK: want, Policy: pol})
	if err != nil {
		return mcp.NewToolResultErrorf("find_tools failed: %v", err), nil
	}
	if resp.Loading && len(resp.Results) == 0 {
		return mcp.NewToolResultError(loadingMessage), nil
	}
	found := make([]foundTool, 0, len(resp.Results))
	budget := maxTokens * 4
	var shown []retrieve.Result
	links := connStates{}
	for _, r := range resp.Results {
		ft := g.foundFrom(r, includeSchema)
		g.markConnection(ctx, links, &ft)
		if maxTokens > 0 {
			b, _ := json.Marshal(ft)
			if len(b)+1 > budget {
				if len(found) == 0 {
					continue // try smaller tools further down
				}
				break
			}
			budget -= len(b) + 1
		} else if len(found) >= topK {
			break
		}
		found = append(found, ft)
		shown = append(shown, r)
	}
	ids := make([]string, len(found))
	for i, f := range found {
		ids[i] = f.CallName
	}
	g.registerForSession(ctx, ids)
	out := map[string]any{"query": query, "results": found, "fallback_used": resp.FallbackUsed,
		"hint": "Execute a tool with run_tool {call_name, arguments}."}
	if h := retrieveHint(query, shown); h != "" {
		out["hint"] = h
	}
	if why := pol.NoGrant(); why != "" && len(found) == 0 {
		out["hint"] = why
	}
	if resp.Loading {
		out["loading"] = true
		out["hint"] = "The catalog is still loading, so these results may be incomplete: search again in a few seconds. " + out["hint"].(string)
	}
	return structured(out), nil
}

// retrieveHint is retrieve.NoMatchHint when no result is better than weak.
func retrieveHint(query string, results []retrieve.Result) string {
	for _, r := range results {
		if r.Match != retrieve.MatchWeak {
			return ""
		}
	}
	return retrieve.NoMatchHint(query)
}

// loadingMessage answers a find_tools that found nothing because the
// catalog is still being loaded for the first time.
const loadingMessage = "find_tools: the gateway is still loading its tool catalog (the first sync of its upstream servers is in progress); call find_tools again in a few seconds"

func (g *Server) handleDescribe(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	callName, err := stringArg(req.GetArguments(), "call_name", true)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	pol, _ := policy.FromContext(ctx)
	set := g.tools.Load()
	id, _ := set.resolve(callName)
	t, known := set.byID[id]
	if !known || !pol.AllowsTool(t.Server, t.Name) {
		return notFound(callName), nil
	}
	if set.appOnly[id] {
		return appOnlyRefusal(callName), nil
	}
	g.registerForSession(ctx, []string{set.name(id)})
	out := map[string]any{
		"call_name": set.name(id), "tool_id": t.ID, "server": t.Server, "name": t.Name, "title": t.Title,
		"description": t.Description, "input_schema": schemaOrEmpty(t.InputSchema),
		"tool_type": t.ToolType, "permission_scope": t.PermissionScope, "status": t.Status,
	}
	if len(t.Annotations) > 0 {
		out["annotations"] = t.Annotations
	}
	if os := outputSchemaOf(t); os != nil {
		out["output_schema"] = os
	}
	// The MCP tool as tools/list gives it, with every field its upstream sent.
	out["tool"] = g.upstreamTool(t, set.name(id))
	return structured(out), nil
}

func (g *Server) handlePlan(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args := req.GetArguments()
	query, err := stringArg(args, "query", true)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if n := utf8.RuneCountInString(query); n > g.cfg.MaxQueryChars {
		return mcp.NewToolResultErrorf("query is %d characters; the limit is %d", n, g.cfg.MaxQueryChars), nil
	}
	topK, err := intArg(args, "top_k", 10, 1, g.cfg.MaxTopK)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	pol, _ := policy.FromContext(ctx)
	resp, err := g.cfg.Retriever.Retrieve(ctx, retrieve.Request{Query: query, TopK: topK, Policy: pol})
	if err != nil {
		return mcp.NewToolResultErrorf("plan failed: %v", err), nil
	}
	cands := make([]PlanCandidate, 0, len(resp.Results))
	for _, r := range resp.Results {
		cands = append(cands, PlanCandidate{CallName: g.tools.Load().name(r.Tool.ID), Description: r.Tool.Description, InputSchema: r.Tool.InputSchema, ToolType: r.Tool.ToolType})
	}
	if len(cands) == 0 {
		return structured(map[string]any{"steps": []any{}, "missing": []string{query},
			"notes": "no available tool matches this task; nothing to plan"}), nil
	}
	plan, err := g.cfg.Planner.Plan(ctx, query, cands)
	if err != nil {
		return mcp.NewToolResultErrorf("plan failed: %v", err), nil
	}
	var v any
	if err := json.Unmarshal(plan, &v); err != nil {
		return mcp.NewToolResultErrorf("plan failed: planner returned invalid JSON: %v", err), nil
	}
	return structured(v), nil
}

// registerForSession remembers tools for a legacy session (strict clients)
// and tells the client its tool list changed, on the same response stream.
func (g *Server) registerForSession(ctx context.Context, ids []string) {
	sid := sessionID(ctx)
	if sid == "" || len(ids) == 0 {
		return
	}
	if pol, _ := policy.FromContext(ctx); pol.Admin {
		return // admins already see the whole catalog
	}
	before, _ := g.cfg.Sessions.Tools(ctx, sid)
	known := map[string]bool{}
	for _, id := range before {
		known[id] = true
	}
	fresh := false
	for _, id := range ids {
		if !known[id] {
			fresh = true
		}
	}
	if !fresh {
		return
	}
	if err := g.cfg.Sessions.AddTools(ctx, sid, ids); err != nil {
		g.log.Warn("session store: could not register tools", "error", err)
		return
	}
	if err := g.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationToolsListChanged), nil); err != nil {
		g.log.Debug("list_changed notification not delivered", "error", err)
	}
}

// ---- helpers ----
