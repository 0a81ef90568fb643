package ragapi

import (
	"fmt"
	"math"
	"net/http"
	"strconv"

	"github.com/toolrag/mcp-gateway/pkg/auth"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// resultItems turns retrieval results into response items.
func resultItems(results []retrieve.Result, includeSchema bool) []ResultItem {
	items := make([]ResultItem, 0, len(results))
	for _, res := range results {
		it := ResultItem{
			ToolID: res.Tool.ID, ToolName: res.Tool.Name, ServerName: res.Tool.Server,
			Score: res.Score, Reason: res.Reason, Description: res.Tool.Description,
			Status: res.Tool.Status, ToolType: res.Tool.ToolType,
			Match: res.Match, Related: res.Related,
		}
		if includeSchema {
			it.InputSchema = res.Tool.InputSchema
		}
		items = append(items, it)
	}
	return items
}

// retrieveGroups answers a request with "queries": one group per query,
// top_k each, a tool listed once (in the first group that finds it).
func (a *API) retrieveGroups(w http.ResponseWriter, r *http.Request, req RetrieveRequest, pol policy.Policy, topK int, includeSchema bool) int {
	// Each query is a retrieval pass and costs one rate-limit token of
	// the key; the request itself paid for the first.
	if extra := retrieve.QueryCost(len(req.Queries)) - 1; extra > 0 {
		if granted, wait := auth.TakeTokens(r.Context(), extra); granted < extra {
			secs := int(math.Ceil(wait.Seconds()))
			w.Header().Set("Retry-After", strconv.Itoa(max(1, secs)))
			return writeError(w, http.StatusTooManyRequests, fmt.Sprintf("rate limit exceeded: each query costs one of the key's rate-limit tokens, and %d queries need %d more than are left; retry in %ds, or send fewer queries",
				len(req.Queries), extra-granted, secs))
		}
	}
	resp, err := retrieve.RetrieveGroups(r.Context(), a.cfg.Retriever, retrieve.Request{
		TopK: topK, Policy: pol, ToolType: req.ToolType, PermissionScope: req.PermissionScope,
	}, req.Queries)
	if err != nil {
		return writeError(w, http.StatusInternalServerError, "retrieve failed: "+err.Error())
	}
	groups := make([]ResultGroup, len(resp.Groups))
	total := 0
	for i, g := range resp.Groups {
		groups[i] = ResultGroup{Query: g.Query, Results: resultItems(g.Results, includeSchema), Hint: g.Hint}
		total += len(g.Results)
	}
	if resp.Loading && total == 0 {
		w.Header().Set("Retry-After", "5")
		return writeError(w, http.StatusServiceUnavailable, LoadingMessage)
	}
	out := map[string]any{"queries": req.Queries, "groups": groups, "fallback_used": resp.FallbackUsed}
	return writeAnswer(w, out, pol, req, total == 0, resp.Loading)
}
