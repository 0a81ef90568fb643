package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// foundGroup is the answer to one capability query of find_tools.
type foundGroup struct {
	Query   string      `json:"query"`
	Results []foundTool `json:"results"`
	Hint    string      `json:"hint,omitempty"`
}

// queriesArg reads find_tools' capability queries: "queries" (1 to
// retrieve.MaxQueries strings) and/or "query" (put first). Duplicates are
// asked once. ok is false when neither is given.
func queriesArg(args map[string]any, maxChars int) (queries []string, grouped bool, err error) {
	query, err := stringArg(args, "query", false)
	if err != nil {
		return nil, false, err
	}
	if strings.TrimSpace(query) != "" {
		queries = append(queries, query)
	}
	if v, ok := args["queries"]; ok && v != nil {
		list, ok := v.([]any)
		if !ok {
			return nil, false, fmt.Errorf("queries must be an array of strings, one capability each")
		}
		grouped = true
		for i, x := range list {
			s, ok := x.(string)
			if !ok || strings.TrimSpace(s) == "" {
				return nil, false, fmt.Errorf("queries[%d] must be a non-empty string", i)
			}
			queries = append(queries, s)
		}
	}
	var out []string
	seen := map[string]bool{}
	for i, q := range queries {
		key := strings.ToLower(strings.Join(strings.Fields(q), " "))
		if seen[key] {
			continue
		}
		seen[key] = true
		if n := utf8.RuneCountInString(q); n > maxChars {
			// The query itself is not repeated back (it may be long, or
			// hold what the caller should not see again in a log).
			if len(queries) == 1 {
				return nil, false, fmt.Errorf("query is %d characters; the limit is %d", n, maxChars)
			}
			return nil, false, fmt.Errorf("query %d of %d is %d characters; the limit is %d", i+1, len(queries), n, maxChars)
		}
		out = append(out, q)
	}
	total := 0
	for _, q := range out {
		total += utf8.RuneCountInString(q)
	}
	switch {
	case len(out) > 1 && total > retrieve.MaxTotalQueryChars:
		return nil, false, fmt.Errorf("queries hold %d characters in all; the limit is %d (one short capability per query)", total, retrieve.MaxTotalQueryChars)
	case len(out) == 0:
		return nil, false, fmt.Errorf("query (or queries) is required: say what you want to do, one capability per query")
	case len(out) > retrieve.MaxQueries:
		return nil, false, fmt.Errorf("queries has %d entries; the limit is %d (one capability per query)", len(out), retrieve.MaxQueries)
	}
	return out, grouped, nil
}

// foundFrom turns a retrieval result into find_tools' form.
func (g *Server) foundFrom(r retrieve.Result, includeSchema bool) foundTool {
	set := g.tools.Load()
	ft := foundTool{
		CallName:    set.name(r.Tool.ID),
		Server:      r.Tool.Server,
		Description: truncate(r.Tool.Description, g.cfg.ShortlistDescChars),
		Score:       round4(r.Score),
		Match:       r.Match,
		ToolType:    r.Tool.ToolType,
		Status:      r.Tool.Status,
	}
	for _, id := range r.Related {
		ft.Related = append(ft.Related, set.name(id))
	}
	if includeSchema {
		ft.InputSchema = schemaOrEmpty(r.Tool.InputSchema)
		ft.OutputSchema = outputSchemaOf(r.Tool)
	}
	return ft
}

// handleFindGroups answers find_tools with several capability queries:
// one group per query, top_k each, a tool listed once (in the first group
// that finds it), and with max_tokens one budget shared by all groups,
// filled rank by rank across the groups.
func (g *Server) handleFindGroups(ctx context.Context, queries []string, topK, maxTokens int, includeSchema bool) *mcp.CallToolResult {
	// Each query is a retrieval pass and costs one rate-limit token of
	// the key; the request itself paid for the first.
	if extra := retrieve.QueryCost(len(queries)) - 1; extra > 0 {
		if granted, wait := auth.TakeTokens(ctx, extra); granted < extra {
			return mcp.NewToolResultErrorf("rate limit exceeded: each query of find_tools costs one of the key's rate-limit tokens, and %d queries need %d more than are left; retry in %ds, or send fewer queries",
				len(queries), extra-granted, int(math.Ceil(wait.Seconds())))
		}
	}
	pol, _ := policy.FromContext(ctx)
	g.Metrics.Finds.Add(1)
	want := topK
	if maxTokens > 0 {
		want = max(topK, g.cfg.MaxTopK/len(queries)) // fill the budget from the best candidates
	}
	resp, err := retrieve.RetrieveGroups(ctx, g.cfg.Retriever, retrieve.Request{TopK: want, Policy: pol}, queries)
	if err != nil {
		return mcp.NewToolResultErrorf("find_tools failed: %v", err)
	}
	total := 0
	for _, gr := range resp.Groups {
		total += len(gr.Results)
	}
	if resp.Loading && total == 0 {
		return mcp.NewToolResultError(loadingMessage)
	}
	groups := make([]foundGroup, len(resp.Groups))
	for i, gr := range resp.Groups {
		groups[i] = foundGroup{Query: gr.Query, Results: []foundTool{}, Hint: gr.Hint}
	}
	budget := maxTokens * 4
	links := connStates{}
	done := make([]bool, len(groups))
	for rank, progressed := 0, true; progressed; rank++ {
		progressed = false
		for i, gr := range resp.Groups {
			if done[i] || rank >= len(gr.Results) || (maxTokens == 0 && len(groups[i].Results) >= topK) {
				continue
			}
			progressed = true
			ft := g.foundFrom(gr.Results[rank], includeSchema)
			g.markConnection(ctx, links, &ft)
			if maxTokens > 0 {
				b, _ := json.Marshal(ft)
				if len(b)+1 > budget {
					if len(groups[i].Results) > 0 {
						done[i] = true
					}
					continue // an empty group tries smaller tools further down
				}
				budget -= len(b) + 1
			}
			groups[i].Results = append(groups[i].Results, ft)
		}
	}
	var ids []string
	for _, gr := range groups {
		for _, f := range gr.Results {
			ids = append(ids, f.CallName)
		}
	}
	g.registerForSession(ctx, ids)
	out := map[string]any{"groups": groups, "fallback_used": resp.FallbackUsed,
		"hint": "Execute a tool with run_tool {call_name, arguments}; `related` lists tools usually needed with a result."}
	if why := pol.NoGrant(); why != "" && len(ids) == 0 {
		out["hint"] = why
	}
	if resp.Loading {
		out["loading"] = true
		out["hint"] = "The catalog is still loading, so these results may be incomplete: search again in a few seconds. " + out["hint"].(string)
	}
	return structured(out)
}
