package retrieve

import (
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// TestFusionWeights: with the default weights a tool that holds the
// query's words (keyword 1.0) and is the dense side's second choice ranks
// above the dense side's first choice that shares only part of the query
// (keyword 0.65), as in "set up a new writer config" → keboola's
// create_config, not another server's create-ai-config (the agent-query
// DEV sets, docs/retrieval.md). The previous equal weights ranked the
// dense choice first; so does a coverage-scaled semantic weight only when
// asked for.
func TestFusionWeights(t *testing.T) {
	mk := func(id string, sem, kw float64) *candidate {
		return &candidate{d: &kdoc{tool: catalog.Tool{ID: id}}, semantic: sem, hasSem: true, keyword: kw}
	}
	for _, tc := range []struct {
		name string
		exp  Experimental
		want string
	}{
		{"default", Experimental{}, "kw__exact"},
		{"previous weights", Experimental{Weights: PreviousWeights}, "dense__near"},
		{"coverage feature", Experimental{Weights: PreviousWeights, CoverageWeight: 0.5}, "kw__exact"},
	} {
		r, err := New(Config{Tools: staticCatalog{}, Experimental: tc.exp})
		if err != nil {
			t.Fatal(err)
		}
		exact, near := mk("kw__exact", 0.6, 1.0), mk("dense__near", 1.0, 0.65)
		exact.coverage, near.coverage = 1, 0.5
		list := []*candidate{near, exact}
		r.fuse(list)
		sortCandidates(list)
		if got := list[0].d.tool.ID; got != tc.want {
			t.Errorf("%s: first %s (scores %.3f, %.3f), want %s", tc.name, got, list[0].score, list[1].score, tc.want)
		}
	}
}
