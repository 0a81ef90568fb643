package retrieve

// Ranking one query: the keyword and dense phases, fusion of their
// signals with metadata and penalties, reranking, and merging the lists
// of split queries.

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// candidate is one tool's signals for one (sub-)query.
type candidate struct {
	d        *kdoc
	q        *kwQuery // the keyword query it was ranked for
	semantic float64  // cosine, or its normalised value (SemanticNorm)
	cosine   float64  // the cosine, for the reason
	hasSem   bool
	keyword  float64   // normalised to [0,1]
	kw       *kwResult // for the matched terms
	kwMask   uint64
	metadata float64
	server   float64
	verb     float64 // action-verb agreement, -1..1
	coverage float64 // MatchSignals.Coverage (only with a coverage feature on)
	penalty  float64
	rerank   float64
	reranked bool
	score    float64
}

func round6(f float64) float64 { return math.Round(f*1e6) / 1e6 }

// keywordPhase is the part of ranking one query that needs no vectors
// (rankAll runs it while the vector index is scanned): the keyword query,
// its BM25F scores and the server-level keyword scores.
type keywordPhase struct {
	kwq *kwQuery
	kws *kwResult
	srv []float64 // by visible server index; nil when the server term is off
}

func (r *Retriever) keywordPhase(snap *visibleCorpus, query string) *keywordPhase {
	kwq := r.keywordQuery(snap, query)
	kp := &keywordPhase{kwq: kwq, kws: snap.scoreWeighted(kwq.order, kwq.weights)}
	if r.cfg.ServerWeight > 0 {
		kp.srv = r.serverScores(snap, kwq.terms)
	}
	return kp
}

// rank scores every visible tool for one query and returns them best first
// (only tools with some signal). kp, when not nil, is the query's
// keywordPhase.
func (r *Retriever) rank(ctx context.Context, snap *visibleCorpus, dense *denseState, pre *denseQuery, kp *keywordPhase, query string, req Request, topK int) ([]*candidate, error) {
	if kp == nil {
		kp = r.keywordPhase(snap, query)
	}
	kwq, kws := kp.kwq, kp.kws
	qterms := kwq.terms
	// At most Candidates keyword and Candidates dense nominees (more
	// with PRF or the server term's additions, which grow the map).
	cands := make(map[*kdoc]*candidate, min(len(kws.hits)+r.cfg.Candidates, 2*r.cfg.Candidates))
	get := func(d *kdoc) *candidate {
		c := cands[d]
		if c == nil {
			c = &candidate{d: d, q: kwq}
			if kws.bySlot != nil {
				if v := kws.bySlot[d.slot]; v > 0 {
					c.keyword = v / kws.max
					c.kw, c.kwMask = kws, kws.maskBySlot[d.slot]
				}
			}
			cands[d] = c
		}
		return c
	}
	hits := kws.hits
	if dense != nil && !r.cfg.PRF && len(hits) > r.cfg.Candidates {
		// Only the best keyword matches are nominated; a dense candidate
		// still gets its exact keyword signal (get).
		selectTop(hits, r.cfg.Candidates, func(a, b kwHit) bool {
			if a.score != b.score {
				return a.score > b.score
			}
			return a.d.tool.ID < b.d.tool.ID
		})
		hits = hits[:r.cfg.Candidates]
	}
	for _, h := range hits {
		get(h.d)
	}
	if r.cfg.PRF && len(kws.hits) > 0 {
		r.feedback(snap, cands, qterms)
	}

	if dense != nil {
		if pre == nil {
			pres, err := r.denseQueries(ctx, dense, snap, []string{query})
			if err != nil {
				return nil, err
			}
			pre = pres[0]
		}
		byKey := r.keyMap(dense)
		vecs, dhits := pre.vecs, pre.hits
		qv := vecs[0]
		for _, h := range dhits[0] {
			d := byKey[h.ID]
			if d == nil || !snap.allowed[d.slot] {
				continue
			}
			c := get(d)
			c.semantic, c.hasSem = float64(h.Score), true
		}
		var kwOnly []*candidate
		for _, c := range cands {
			if !c.hasSem {
				kwOnly = append(kwOnly, c)
			}
		}
		selectTop(kwOnly, r.cfg.Candidates, func(a, b *candidate) bool {
			if a.keyword != b.keyword {
				return a.keyword > b.keyword
			}
			return a.d.tool.ID < b.d.tool.ID
		})
		for _, c := range kwOnly[min(len(kwOnly), r.cfg.Candidates):] {
			delete(cands, c.d)
		}
		kwOnly = kwOnly[:min(len(kwOnly), r.cfg.Candidates)]
		// The keyword-only candidates' cosines, in one call.
		keys := make([]int64, 0, len(kwOnly))
		scored := kwOnly[:0:0]
		for _, c := range kwOnly {
			if key := vindex.ToolKey(c.d.tool.ID); byKey[key] == c.d {
				keys = append(keys, key)
				scored = append(scored, c)
			}
		}
		best, found := make([]float32, len(keys)), make([]bool, len(keys))
		dense.ix.MaxDots(keys, [][]float32{qv}, best, found)
		for i, c := range scored {
			if found[i] {
				c.semantic, c.hasSem = float64(best[i]), true
			}
		}
		if len(vecs) > 1 {
			stepSimilarity(dense, byKey, snap, vecs, dhits[1:], cands, get)
		}
		normalizeSemantic(cands, r.cfg.SemanticNorm)
	}

	if r.cfg.ServerWeight > 0 {
		r.serverLevel(snap, cands, kp.srv)
	}

	list := make([]*candidate, 0, len(cands))
	for _, c := range cands {
		c.q = kwq
		c.verb = verbAgreement(kwq.verb, c.d.shape.verb)
		c.metadata = metadataScore(c.d.tool, req)
		c.penalty = r.penalty(c.d.tool, req)
		if r.cfg.CoverageWeight != 0 || r.cfg.KeywordCoverage != 0 || r.cfg.SemanticCoverage != 0 {
			c.coverage = matchSignals(c).Coverage
		}
		list = append(list, c)
	}
	r.fuse(list)
	sortCandidates(list)

	if r.cfg.Reranker != nil && len(list) > 0 {
		if err := r.rerank(ctx, query, list); err != nil {
			return nil, err
		}
	}
	return list, nil
}

func sortCandidates(list []*candidate) {
	sort.Slice(list, func(i, j int) bool {
		if list[i].score != list[j].score {
			return list[i].score > list[j].score
		}
		return list[i].d.tool.ID < list[j].d.tool.ID
	})
}

// fuse computes each candidate's final score.
func (r *Retriever) fuse(list []*candidate) {
	w := r.cfg.Weights
	sem := func(c *candidate) float64 {
		if c.reranked {
			return c.rerank
		}
		return c.semantic
	}
	switch r.cfg.Fusion {
	case FusionRRF:
		semRank := ranks(list, func(c *candidate) (float64, bool) { return sem(c), c.hasSem || c.reranked })
		kwRank := ranks(list, func(c *candidate) (float64, bool) { return c.keyword, c.keyword > 0 })
		srvRank := ranks(list, func(c *candidate) (float64, bool) { return c.server, c.server > 0 })
		for _, c := range list {
			// Scaled so that rank 1 in a signal contributes its full weight.
			s := 0.0
			if k, ok := semRank[c]; ok {
				s += w.Semantic * (rrfK + 1) / (rrfK + float64(k))
			}
			if k, ok := kwRank[c]; ok {
				s += w.Keyword * (rrfK + 1) / (rrfK + float64(k))
			}
			if k, ok := srvRank[c]; ok {
				s += r.cfg.ServerWeight * (rrfK + 1) / (rrfK + float64(k))
			}
			c.score = s + w.Metadata*c.metadata + r.cfg.VerbWeight*c.verb + c.penalty
		}
	default:
		kc := r.cfg.KeywordCoverage
		if r.cfg.SemanticCoverage != 0 {
			best := 0.0
			for _, c := range list {
				best = max(best, c.coverage)
			}
			w.Semantic *= 1 - r.cfg.SemanticCoverage*best
		}
		for _, c := range list {
			kw := c.keyword
			if kc != 0 {
				kw *= 1 - kc + kc*c.coverage
			}
			c.score = w.Semantic*sem(c) + w.Keyword*kw + w.Metadata*c.metadata +
				r.cfg.ServerWeight*c.server + r.cfg.VerbWeight*c.verb + c.penalty +
				r.cfg.CoverageWeight*c.coverage
		}
	}
	if r.cfg.Scorer != nil {
		if scores := r.cfg.Scorer(features(list)); len(scores) == len(list) {
			for i, c := range list {
				c.score = scores[i] + c.penalty
			}
		}
	}
}

// ranks returns the 1-based rank of each candidate that has the signal.
func ranks(list []*candidate, sig func(*candidate) (float64, bool)) map[*candidate]int {
	type kv struct {
		c *candidate
		v float64
	}
	var xs []kv
	for _, c := range list {
		if v, ok := sig(c); ok {
			xs = append(xs, kv{c, v})
		}
	}
	sort.Slice(xs, func(i, j int) bool {
		if xs[i].v != xs[j].v {
			return xs[i].v > xs[j].v
		}
		return xs[i].c.d.tool.ID < xs[j].c.d.tool.ID
	})
	out := make(map[*candidate]int, len(xs))
	for i, x := range xs {
		out[x.c] = i + 1
	}
	return out
}

// metadataScore rewards the requested tool type and permission scope:
// 0.5 for each that matches.
func metadataScore(t catalog.Tool, req Request) float64 {
	s := 0.0
	if req.ToolType != "" && strings.EqualFold(req.ToolType, t.ToolType) {
		s += 0.5
	}
	if req.PermissionScope != "" && strings.EqualFold(req.PermissionScope, t.PermissionScope) {
		s += 0.5
	}
	return s
}

var scopeLevel = map[string]int{catalog.ScopeRead: 0, catalog.ScopeWrite: 1, catalog.ScopeDestructive: 2}

func (r *Retriever) penalty(t catalog.Tool, req Request) float64 {
	p := 0.0
	if t.Status == catalog.StatusStale {
		p += r.cfg.StalePenalty
	}
	if req.PermissionScope != "" {
		want, ok1 := scopeLevel[strings.ToLower(req.PermissionScope)]
		have, ok2 := scopeLevel[t.PermissionScope]
		if ok1 && ok2 && have > want {
			p += r.cfg.ScopePenalty
		}
	}
	return p
}

// reason explains a candidate's score.
func (r *Retriever) reason(c *candidate) string {
	var parts []string
	if c.reranked {
		parts = append(parts, fmt.Sprintf("rerank=%.3f", c.rerank))
	}
	if c.hasSem {
		parts = append(parts, fmt.Sprintf("semantic=%.3f", c.cosine))
	}
	if c.keyword > 0 {
		parts = append(parts, fmt.Sprintf("keyword=%.3f [%s]", c.keyword, strings.Join(c.kw.matched(c.kwMask), " ")))
	} else {
		parts = append(parts, "keyword=0")
	}
	if c.metadata > 0 {
		parts = append(parts, fmt.Sprintf("metadata=%.2f", c.metadata))
	}
	if c.server > 0 {
		parts = append(parts, fmt.Sprintf("server=%.3f", c.server))
	}
	if c.verb != 0 {
		parts = append(parts, fmt.Sprintf("verb=%+.0f", c.verb))
	}
	if c.penalty != 0 {
		parts = append(parts, fmt.Sprintf("policy_penalty=%.2f", c.penalty))
	}
	return strings.Join(parts, "; ")
}

// rerank rescores the shortlist with the reranker; its score replaces the
// semantic term. When the reranker fails the first-stage order is kept.
func (r *Retriever) rerank(ctx context.Context, query string, list []*candidate) error {
	n := min(r.cfg.RerankPool, len(list))
	docs := make([]string, n)
	for i := range n {
		srv, _ := r.kw.servers[list[i].d.tool.Server]
		docs[i] = indexer.Document(list[i].d.tool, srv)
	}
	scores, err := r.cfg.Reranker.Rerank(ctx, query, docs)
	if err == nil && len(scores) != n {
		err = fmt.Errorf("the reranker returned %d scores for %d documents", len(scores), n)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("retrieve: reranking the shortlist: %w", err)
		}
		// Degrade to the first-stage order rather than fail the query.
		r.log.Warn("reranker failed; results keep the hybrid order", "error", err)
		return nil
	}
	for i := range n {
		list[i].rerank, list[i].reranked = scores[i], true
	}
	head := list[:n]
	r.fuse(head)
	sortCandidates(head)
	return nil
}

// merge combines the rankings of the whole query (lists[0]) and its
// sub-queries into one list.
func (r *Retriever) merge(lists [][]*candidate, topK int) []*candidate {
	seen := map[string]bool{}
	var out []*candidate
	switch r.cfg.Merge {
	case MergeRRF:
		// Each list votes 1/(k+rank); the whole query counts as much as
		// all sub-queries together so that it keeps the lead on ties.
		votes := map[string]float64{}
		first := map[string]*candidate{}
		for li, l := range lists {
			w := 1.0
			if li == 0 {
				w = float64(len(lists) - 1)
			}
			for rank, c := range l {
				votes[c.d.tool.ID] += w * (rrfK + 1) / (rrfK + float64(rank+1))
				if _, ok := first[c.d.tool.ID]; !ok {
					first[c.d.tool.ID] = c
				}
			}
		}
		for id, c := range first {
			cc := *c
			cc.score = votes[id] / float64(2*(len(lists)-1))
			out = append(out, &cc)
		}
		sortCandidates(out)
	case MergeMax:
		best := map[string]*candidate{}
		for _, l := range lists {
			for _, c := range l {
				if b, ok := best[c.d.tool.ID]; !ok || c.score > b.score {
					best[c.d.tool.ID] = c
				}
			}
		}
		for _, c := range best {
			out = append(out, c)
		}
		sortCandidates(out)
	default:
		// Round-robin: the whole query's best, then each sub-query's best,
		// then the second of each, and so on.
		for i := 0; len(out) < topK; i++ {
			progressed := false
			for _, l := range lists {
				if i >= len(l) {
					continue
				}
				progressed = true
				c := l[i]
				if seen[c.d.tool.ID] {
					continue
				}
				seen[c.d.tool.ID] = true
				out = append(out, c)
			}
			if !progressed {
				break
			}
		}
	}
	return out
}

// selectTop reorders xs so that its first k elements are the k best by
// better (in no particular order), in expected linear time.
func selectTop[T any](xs []T, k int, better func(a, b T) bool) {
	lo, hi := 0, len(xs)-1
	if k <= 0 || k >= len(xs) {
		return
	}
	for lo < hi {
		// Median of three as the pivot.
		mid := lo + (hi-lo)/2
		if better(xs[mid], xs[lo]) {
			xs[mid], xs[lo] = xs[lo], xs[mid]
		}
		if better(xs[hi], xs[lo]) {
			xs[hi], xs[lo] = xs[lo], xs[hi]
		}
		if better(xs[hi], xs[mid]) {
			xs[hi], xs[mid] = xs[mid], xs[hi]
		}
		pivot := xs[mid]
		i, j := lo, hi
		for i <= j {
			for better(xs[i], pivot) {
				i++
			}
			for better(pivot, xs[j]) {
				j--
			}
			if i <= j {
				xs[i], xs[j] = xs[j], xs[i]
				i++
				j--
			}
		}
		switch {
		case k-1 <= j:
			hi = j
		case k-1 >= i:
			lo = i
		default:
			return
		}
	}
}
