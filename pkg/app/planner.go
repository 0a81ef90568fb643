package app

import (
	"context"
	"encoding/json"

	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/planner"
)

// PlannerFromEnv returns the plan meta-tool's planner configured by
// TOOL_RAG_PLANNER_* (nil when it is not enabled).
func PlannerFromEnv(getenv func(string) string) (gateway.Planner, error) {
	cfg, err := planner.ConfigFromEnv(getenv)
	if err != nil || !cfg.Enabled {
		return nil, err
	}
	p, err := planner.New(cfg)
	if err != nil {
		return nil, err
	}
	return plannerAdapter{p}, nil
}

// plannerAdapter lets a *planner.Planner serve the gateway's plan tool.
type plannerAdapter struct{ p *planner.Planner }

func (a plannerAdapter) Plan(ctx context.Context, query string, cands []gateway.PlanCandidate) (json.RawMessage, error) {
	in := make([]planner.Candidate, len(cands))
	for i, c := range cands {
		in[i] = planner.Candidate{CallName: c.CallName, Description: c.Description, InputSchema: c.InputSchema, ToolType: c.ToolType}
	}
	plan, err := a.p.Plan(ctx, query, in)
	if err != nil {
		return nil, err
	}
	return json.Marshal(plan)
}
