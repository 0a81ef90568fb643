package retrieve_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// TestScorer checks that a Scorer sees every candidate's features and
// that its scores decide the order; a nil answer keeps the fusion's.
func TestScorer(t *testing.T) {
	c, _ := loadSynthetic(t)
	emb := embed.NewBuiltin()
	ix := buildIndex(t, c, emb)
	req := retrieve.Request{Query: "send an email to the team", TopK: 5, Policy: policy.Unrestricted()}
	run := func(scorer func([]retrieve.Features) []float64) []string {
		t.Helper()
		r := newRetriever(t, retrieve.Config{Tools: c, Index: ix, Embedder: emb, Experimental: retrieve.Experimental{Scorer: scorer}})
		resp, err := r.Retrieve(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return ids(resp)
	}
	base := run(nil)

	var seen []retrieve.Features
	keep := run(func(fs []retrieve.Features) []float64 { seen = fs; return nil })
	if !slices.Equal(keep, base) {
		t.Fatalf("a nil Scorer answer changed the order: %v, want %v", keep, base)
	}
	if len(seen) < len(base) {
		t.Fatalf("the Scorer saw %d candidates, fewer than the %d results", len(seen), len(base))
	}
	byID := map[string]retrieve.Features{}
	semRanks, kwRanks := map[int]bool{}, map[int]bool{}
	for _, f := range seen {
		byID[f.ToolID] = f
		if f.HasSemantic {
			semRanks[f.SemanticRank] = true
		}
		if f.Keyword > 0 {
			kwRanks[f.KeywordRank] = true
		}
	}
	top := byID[base[0]]
	if top.Fused <= 0 || top.QueryTerms == 0 || top.Coverage <= 0 || !top.HasSemantic {
		t.Fatalf("the best result's features are not filled in: %+v", top)
	}
	for _, ranks := range []map[int]bool{semRanks, kwRanks} {
		for k := 1; k <= len(ranks); k++ {
			if !ranks[k] {
				t.Fatalf("signal ranks are not 1..%d: %v", len(ranks), ranks)
			}
		}
	}

	// Scoring by the negated fusion score reverses the order.
	rev := run(func(fs []retrieve.Features) []float64 {
		out := make([]float64, len(fs))
		for i, f := range fs {
			out[i] = -f.Fused
		}
		return out
	})
	if slices.Contains(rev, base[0]) {
		t.Fatalf("the fusion's best %s is still in the reversed top 5 %v", base[0], rev)
	}
}
