package retrieve_test

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// bigServerCatalog is the red team's catalog: three servers at the
// gateway's per-server limit (2,000 tools each) and one small one, 6,005
// tools in all (deterministic).
func bigServerCatalog() *memCatalog {
	c := synthCatalog(6005)
	c.servers = c.servers[:4]
	for i := range c.tools {
		t := &c.tools[i]
		t.Server = c.servers[min(i/2000, 3)].ID
		t.ID = ""
		catalog.Finalize(t)
	}
	return c
}

// surfaceMaxTopK and surfaceMaxQueryChars are find_tools' and POST
// /tool-rag/retrieve's default limits (top_k, characters of one query).
const surfaceMaxTopK, surfaceMaxQueryChars = 50, 2000

// worstQueries are n queries of chars characters each, of catalog words
// (so that every term has postings).
func worstQueries(n, chars int) []string {
	rng := rand.New(rand.NewPCG(3, 4))
	words := append(append(append([]string{}, benchVerbs...), benchNouns...), benchWords...)
	qs := make([]string, n)
	for i := range qs {
		var b strings.Builder
		for b.Len() < chars-15 {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		qs[i] = b.String()
	}
	return qs
}

// BenchmarkRetrieveWorstCase6k measures the most expensive requests
// find_tools and POST /tool-rag/retrieve accept (top_k 50; MaxQueries
// queries sharing MaxTotalQueryChars, or two of 2,000 characters) against
// a normal one (one short query, top_k 5) over 6,005 tools whose servers
// are at the per-server limit, which makes related (a scan of the
// result's server) cost most. The ratio of their cpu-ns/op is the
// amplification one request can buy (goal: at most 20).
func BenchmarkRetrieveWorstCase6k(b *testing.B) {
	c := bigServerCatalog()
	emb := embed.NewBuiltin()
	r := newRetriever(b, retrieve.Config{Tools: c, Index: buildIndex(b, c, emb), Embedder: emb})
	ctx := context.Background()
	b.Run("normal", func(b *testing.B) {
		req := retrieve.Request{TopK: 5, Policy: policy.Unrestricted()}
		cpu0, n := testenv.ProcessCPU(), 0
		for i := 0; b.Loop(); i++ {
			req.Query = benchQueries[i%len(benchQueries)]
			if _, err := r.Retrieve(ctx, req); err != nil {
				b.Fatal(err)
			}
			n++
		}
		b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(n), "cpu-ns/op")
	})
	for _, w := range []struct {
		name     string
		n, chars int
	}{
		{"worst-8x500", retrieve.MaxQueries, retrieve.MaxTotalQueryChars / retrieve.MaxQueries},
		{"worst-2x2000", retrieve.MaxTotalQueryChars / surfaceMaxQueryChars, surfaceMaxQueryChars},
	} {
		b.Run(w.name, func(b *testing.B) {
			qs := worstQueries(w.n, w.chars)
			req := retrieve.Request{TopK: surfaceMaxTopK, Policy: policy.Unrestricted()}
			cpu0, n := testenv.ProcessCPU(), 0
			for b.Loop() {
				if _, err := retrieve.RetrieveGroups(ctx, r, req, qs); err != nil {
					b.Fatal(err)
				}
				n++
			}
			b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(n), "cpu-ns/op")
		})
	}
}
