package retrieve_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// After incremental syncs that change, remove and re-add many tools, the
// keyword index ranks and scores exactly like one built from scratch.
func TestIncrementalSyncMatchesFresh(t *testing.T) {
	c, queries := loadSynthetic(t)
	live := &memCatalog{tools: slices.Clone(c.tools), servers: c.servers}
	inc := newRetriever(t, retrieve.Config{Tools: live})
	steps := []func(){
		func() { // rewrite half of the tools
			for i := 0; i < len(live.tools); i += 2 {
				live.tools[i].Description += " Updated wording about forecasts and invoices."
				catalog.Finalize(&live.tools[i])
			}
		},
		func() { live.tools = live.tools[:len(live.tools)-15] },                  // drop 15
		func() { live.tools = append(live.tools, c.tools[len(c.tools)-15:]...) }, // re-add them
		func() { // drop every third, rename one
			var kept []catalog.Tool
			for i, tl := range live.tools {
				if i%3 != 0 {
					kept = append(kept, tl)
				}
			}
			kept[0].Name = "renamed_tool"
			kept[0].ID = ""
			catalog.Finalize(&kept[0])
			live.tools = kept
		},
	}
	for si, step := range steps {
		step()
		if err := inc.Sync(context.Background()); err != nil {
			t.Fatal(err)
		}
		fresh := newRetriever(t, retrieve.Config{Tools: &memCatalog{tools: slices.Clone(live.tools), servers: c.servers}})
		if inc.Keywords().Len() != len(live.tools) {
			t.Fatalf("step %d: index holds %d tools, catalog %d", si, inc.Keywords().Len(), len(live.tools))
		}
		for _, q := range queries {
			req := retrieve.Request{Query: q.Query, TopK: 10, Policy: policy.Unrestricted()}
			a, err := inc.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			b, err := fresh.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(scored(a)) != fmt.Sprint(scored(b)) {
				t.Errorf("step %d, %s: incremental %v\nfresh %v", si, q.ID, scored(a), scored(b))
			}
		}
	}
}

// BenchmarkKeywordResync10k measures a sync in which 2,000 of 10,000 tools
// changed (one posting-list pass per affected term).
func BenchmarkKeywordResync10k(b *testing.B) {
	c := synthCatalog(10000)
	kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	kw.Sync(c.tools, c.servers)
	for i := 0; b.Loop(); i++ {
		for j := 0; j < 2000; j++ {
			c.tools[j].Description = fmt.Sprintf("changed %d %d", i, j)
			catalog.Finalize(&c.tools[j])
		}
		if up, _ := kw.Sync(c.tools, c.servers); up != 2000 {
			b.Fatalf("updated %d", up)
		}
	}
}
