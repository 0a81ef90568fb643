package retrieve_test

import (
	"context"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// TestRedTeam2RelatedBudget (finding 7): related costs a scan of the
// result's server per result, so 8 queries × top_k 50 over servers of
// 2,000 tools cost ~40 normal queries of CPU. Only the first
// MaxRelatedResults results of a request (in a grouped request, the first
// MaxRelatedResults/len(queries) of each group, at least 2) list related
// tools now; the figures are BenchmarkRetrieveWorstCase6k's.
func TestRedTeam2RelatedBudget(t *testing.T) {
	c := synthCatalog(400)
	for i := range c.tools {
		c.tools[i].Server, c.tools[i].ID = c.servers[0].ID, ""
		catalog.Finalize(&c.tools[i])
	}
	c.servers = c.servers[:1]
	emb := embed.NewBuiltin()
	r := newRetriever(t, retrieve.Config{Tools: c, Index: buildIndex(t, c, emb), Embedder: emb})
	ctx := context.Background()
	resp, err := r.Retrieve(ctx, retrieve.Request{Query: "create a new invoice for the customer", TopK: 50, Policy: policy.Unrestricted()})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Results) != 50 {
		t.Fatalf("%d results, want 50", len(resp.Results))
	}
	with := func(rs []retrieve.Result) (first, rest int) {
		for i, res := range rs {
			if len(res.Related) == 0 {
				continue
			}
			if i < retrieve.MaxRelatedResults {
				first++
			} else {
				rest++
			}
		}
		return
	}
	if first, rest := with(resp.Results); first == 0 || rest != 0 {
		t.Errorf("results with related: %d of the first %d, %d after them; want some, then none", first, retrieve.MaxRelatedResults, rest)
	}
	queries := []string{"create a new invoice", "send a message to the team", "schedule a meeting", "download the stock report",
		"write a file", "delete the old container image", "list recent pull requests", "find the route"}
	groups, err := retrieve.RetrieveGroups(ctx, r, retrieve.Request{TopK: 50, Policy: policy.Unrestricted()}, queries)
	if err != nil {
		t.Fatal(err)
	}
	per := max(2, retrieve.MaxRelatedResults/len(queries))
	total := 0
	for _, g := range groups.Groups {
		for i, res := range g.Results {
			if i >= per && len(res.Related) > 0 {
				t.Errorf("group %q: result %d lists related tools; only the first %d of a group may", g.Query, i+1, per)
			}
			if len(res.Related) > 0 {
				total++
			}
		}
	}
	if total == 0 || total > per*len(queries) {
		t.Errorf("%d grouped results list related tools; want 1 to %d", total, per*len(queries))
	}
}
