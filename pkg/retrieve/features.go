package retrieve

import (
	"context"
	"math"
	"regexp"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// serverLevel adds the coarse level of two-level retrieval: the query is
// matched against each server as a whole (its description plus the union of
// its visible tools' text for the keyword part, its best-matching visible
// tool for the semantic part), and every tool of the server gets that score
// in its server term. Only visible tools take part, so tools hidden by the
// policy cannot lift their siblings. kw are the servers' keyword scores
// (serverScores).
func (r *Retriever) serverLevel(snap *snapshot, cands map[*kdoc]*candidate, kw []float64) {
	var maxKw float64
	for _, v := range kw {
		maxKw = math.Max(maxKw, v)
	}
	semBest := make([]float64, len(snap.srvNames))
	semSeen := make([]bool, len(snap.srvNames))
	hasSem := false
	for d, c := range cands {
		if c.hasSem {
			hasSem = true
			if k := snap.srvOf[d.slot]; !semSeen[k] || c.semantic > semBest[k] {
				semBest[k], semSeen[k] = c.semantic, true
			}
		}
	}
	w := r.cfg.Weights
	for d, c := range cands {
		srv := snap.srvOf[d.slot]
		k := 0.0
		if maxKw > 0 {
			k = kw[srv] / maxKw
		}
		if hasSem && w.Semantic+w.Keyword > 0 {
			c.server = (w.Semantic*semBest[srv] + w.Keyword*k) / (w.Semantic + w.Keyword)
		} else {
			c.server = k
		}
	}
	// Tools with no signal of their own still belong to a matching server:
	// give them a candidate entry so that the server term can lift them.
	if !hasSem && maxKw > 0 {
		for srv, v := range kw {
			if v == 0 {
				continue
			}
			for _, d := range snap.byServer[snap.srvNames[srv]] {
				if _, ok := cands[d]; !ok {
					cands[d] = &candidate{d: d, server: v / maxKw}
				}
			}
		}
	}
}

// serverScores returns the server-level keyword score of each visible
// server (by its index in snap.srvNames): from the server-term index when
// the view shows whole servers, else from the tool postings.
func (r *Retriever) serverScores(snap *snapshot, qterms []string) []float64 {
	if kw, ok := r.srvTerms.get(r.kw).scoreServers(snap, qterms); ok {
		return kw
	}
	byName := snap.scoreServers(qterms)
	kw := make([]float64, len(snap.srvNames))
	for k, name := range snap.srvNames {
		kw[k] = byName[name]
	}
	return kw
}

// Pseudo-relevance feedback settings.
const (
	prfDocs   = 3   // top keyword tools read
	prfTerms  = 5   // terms added
	prfWeight = 0.3 // weight of an added term relative to a query term
)

// feedback expands the keyword query with the most distinctive terms of the
// first-pass best keyword matches and re-scores the keyword signal.
func (r *Retriever) feedback(snap *snapshot, cands map[*kdoc]*candidate, qterms []string) {
	var top []*candidate
	for _, c := range cands {
		if c.keyword > 0 {
			top = append(top, c)
		}
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].keyword != top[j].keyword {
			return top[i].keyword > top[j].keyword
		}
		return top[i].d.tool.ID < top[j].d.tool.ID
	})
	if len(top) > prfDocs {
		top = top[:prfDocs]
	}
	inQuery := map[string]bool{}
	for _, t := range qterms {
		inQuery[t] = true
	}
	n := float64(snap.nVisible)
	gain := map[string]float64{}
	for _, c := range top {
		for term, tf := range c.d.terms {
			if inQuery[term] {
				continue
			}
			var t float64
			for f := Field(0); f < numFields; f++ {
				t += snap.ix.weights[f] * float64(tf[f])
			}
			gain[term] += t * idf(n, float64(snap.df(term)))
		}
	}
	type tg struct {
		t string
		g float64
	}
	var xs []tg
	for t, g := range gain {
		xs = append(xs, tg{t, g})
	}
	sort.Slice(xs, func(i, j int) bool {
		if xs[i].g != xs[j].g {
			return xs[i].g > xs[j].g
		}
		return xs[i].t < xs[j].t
	})
	counts, order := countTerms(qterms)
	weights := map[string]float64{}
	for t, c := range counts {
		weights[t] = float64(c)
	}
	for i := 0; i < len(xs) && i < prfTerms; i++ {
		order = append(order, xs[i].t)
		weights[xs[i].t] = prfWeight
	}
	kws := snap.scoreWeighted(order, weights)
	for _, c := range cands {
		c.keyword, c.kw, c.kwMask = 0, nil, 0
	}
	for _, h := range kws.hits {
		c := cands[h.d]
		if c == nil {
			c = &candidate{d: h.d}
			cands[h.d] = c
		}
		c.keyword = h.score / kws.max
		c.kw, c.kwMask = kws, h.mask
	}
}

var (
	// Step separators: "and then", ", then", "then", "afterwards", "after
	// that", "finally", "; ", new lines.
	stepSplit = regexp.MustCompile(`(?i)(?:,?\s+and\s+then\s+|,\s*then\s+|\s+then\s+|;\s*|\n+|,?\s+after\s+that,?\s+|,?\s+afterwards,?\s+|,?\s+finally,?\s+)`)
	// Sentence ends.
	sentenceSplit = regexp.MustCompile(`[.!?。！？]+(?:\s+|$)`)
	// Clause separators inside a step: "and", "as well as", commas.
	clauseSplit = regexp.MustCompile(`(?i)(?:,?\s+and\s+|,?\s+as\s+well\s+as\s+|,\s+|\s+also\s+)`)
	// Numbered or bulleted steps: "1. ", "2) ", "- ", "* ", "step 3:".
	numbered = regexp.MustCompile(`(?i)(?:^|\s)(?:\(?\d{1,2}[.)]|[-*•]|step\s+\d+:?)\s+`)
)

// Decompose splits a multi-step request into its steps: at "and then",
// ", then", "; ", sentence ends, new lines and numbered or bulleted steps.
// Steps with fewer than two content words are dropped. A request that is a
// single step returns nil.
func Decompose(query string) []string {
	q := numbered.ReplaceAllString(query, "\n")
	var parts []string
	for _, s := range sentenceSplit.Split(q, -1) {
		for _, p := range stepSplit.Split(s, -1) {
			parts = appendClauses(parts, p)
		}
	}
	if len(parts) < 2 {
		return nil
	}
	if len(parts) > maxSubQueries {
		parts = parts[:maxSubQueries]
	}
	return parts
}

// appendClauses appends the step, split at "and" and commas when every
// clause keeps at least two content words (so "beat tracking and MFCC
// extraction" splits but "Ana and Bo" does not).
func appendClauses(parts []string, step string) []string {
	step = strings.TrimSpace(strings.Trim(step, ",:"))
	if len(Terms(step)) < 2 {
		return parts
	}
	clauses := clauseSplit.Split(step, -1)
	if len(clauses) > 1 {
		ok := true
		for _, c := range clauses {
			if len(Terms(c)) < 2 {
				ok = false
				break
			}
		}
		if ok {
			for _, c := range clauses {
				parts = append(parts, strings.TrimSpace(c))
			}
			return parts
		}
	}
	return append(parts, step)
}

// KeywordScan ranks tools by BM25F alone, without a vector index or an
// embedder: the fallback when no index is available. The request's policy
// applies as in Retrieve. FallbackUsed is always true.
func KeywordScan(tools []catalog.Tool, servers []catalog.Server, req Request) Response {
	r, err := New(Config{Tools: staticCatalog{tools, servers}})
	if err != nil {
		return Response{FallbackUsed: true}
	}
	resp, err := r.Retrieve(context.Background(), req)
	if err != nil {
		return Response{FallbackUsed: true}
	}
	resp.FallbackUsed = true
	return resp
}

// staticCatalog is a ToolLister over fixed slices.
type staticCatalog struct {
	tools   []catalog.Tool
	servers []catalog.Server
}

func (c staticCatalog) ListTools(context.Context) ([]catalog.Tool, error)     { return c.tools, nil }
func (c staticCatalog) ListServers(context.Context) ([]catalog.Server, error) { return c.servers, nil }
