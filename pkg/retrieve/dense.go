package retrieve

// The dense signal: the current vector index, the queries' vectors and
// their shortlists, step similarity, and the vector id → tool map.

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"strconv"

	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// denseState is the vector index usable for one query.
type denseState struct {
	ix   *vindex.Index
	meta vindex.Meta
}

// denseIndex returns the current vector index when it can answer queries:
// present, non-empty and built with the configured embedder.
func (r *Retriever) denseIndex() *denseState {
	if r.cfg.Index == nil || r.cfg.Embedder == nil {
		return nil
	}
	ix, meta, ok := r.cfg.Index.Current()
	if !ok || ix == nil || ix.Len() == 0 {
		return nil
	}
	if meta.ModelID != r.cfg.Embedder.ModelID() || ix.Dim() != r.cfg.Embedder.Dim() {
		r.log.Warn("vector index was built with another embedder; answering with the keyword scan until it is rebuilt",
			"index_model", meta.ModelID, "index_dim", ix.Dim(), "embedder_model", r.cfg.Embedder.ModelID(), "embedder_dim", r.cfg.Embedder.Dim())
		return nil
	}
	return &denseState{ix: ix, meta: meta}
}

// denseQuery is one query's vectors (the whole query first, then its
// steps) and their dense shortlists.
type denseQuery struct {
	vecs [][]float32
	hits [][]vindex.Hit
}

// denseQueries embeds each query (and its steps) and scores all of them in
// one pass over the vector index. nil entries when dense is nil.
func (r *Retriever) denseQueries(ctx context.Context, dense *denseState, snap *visibleCorpus, queries []string) ([]*denseQuery, error) {
	out := make([]*denseQuery, len(queries))
	if dense == nil {
		return out, nil
	}
	var all [][]float32
	for i, q := range queries {
		qv, err := r.cfg.Embedder.EmbedQuery(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("retrieve: embedding the query: %w", err)
		}
		dq := &denseQuery{vecs: [][]float32{qv}}
		if !r.cfg.SemanticWholeOnly {
			steps, err := r.stepVectors(ctx, q)
			if err != nil {
				return nil, err
			}
			dq.vecs = append(dq.vecs, steps...)
		}
		out[i] = dq
		all = append(all, dq.vecs...)
	}
	byKey := r.keyMap(dense)
	allow := func(id int64) bool {
		d := byKey[id]
		return d != nil && snap.allowed[d.slot]
	}
	if snap.nVisible == len(r.kw.byID) && len(byKey) == dense.ix.Len() {
		// Every indexed tool is visible: the unfiltered (batched) scan
		// is faster; hits are still checked by the caller.
		allow = nil
	}
	// Candidates: the dense shortlist plus the best keyword matches, each
	// with both signals computed exactly (rank).
	k := min(snap.nVisible, r.cfg.Candidates)
	hits := searchParallel(dense.ix, all, k, allow)
	n := 0
	for _, dq := range out {
		dq.hits = hits[n : n+len(dq.vecs)]
		n += len(dq.vecs)
	}
	return out, nil
}

// searchParallel is ix.SearchMulti with the index's rows split over up
// to GOMAXPROCS goroutines: each goroutine scores its rows against every
// query vector.
func searchParallel(ix *vindex.Index, qs [][]float32, k int, allow func(int64) bool) [][]vindex.Hit {
	workers := runtime.GOMAXPROCS(0)
	if workers <= 1 {
		return ix.SearchMulti(qs, k, allow)
	}
	return ix.SearchMultiSplit(qs, k, allow, workers)
}

// stepVectors embeds the steps of a multi-step request (nil when
// Decompose does not split it).
func (r *Retriever) stepVectors(ctx context.Context, query string) ([][]float32, error) {
	parts := Decompose(query)
	if len(parts) < 2 {
		return nil, nil
	}
	vecs := make([][]float32, 0, len(parts))
	for _, part := range parts {
		pv, err := r.cfg.Embedder.EmbedQuery(ctx, part)
		if err != nil {
			return nil, fmt.Errorf("retrieve: embedding a step of the query: %w", err)
		}
		vecs = append(vecs, pv)
	}
	return vecs, nil
}

// stepSimilarity adds each step's dense shortlist (stepHits) to the
// candidates and raises each candidate's cosine to the best of the whole
// request and its steps (vecs: the whole request first).
func stepSimilarity(dense *denseState, byKey map[int64]*kdoc, snap *visibleCorpus,
	vecs [][]float32, stepHits [][]vindex.Hit, cands map[*kdoc]*candidate, get func(*kdoc) *candidate) {
	for _, hits := range stepHits {
		for _, h := range hits {
			if d := byKey[h.ID]; d != nil && snap.allowed[d.slot] {
				get(d)
			}
		}
	}
	keys := make([]int64, 0, len(cands))
	var scored []*candidate
	for d, c := range cands {
		if key := vindex.ToolKey(d.tool.ID); byKey[key] == d {
			keys = append(keys, key)
			scored = append(scored, c)
		}
	}
	best, found := make([]float32, len(keys)), make([]bool, len(keys))
	dense.ix.MaxDots(keys, vecs, best, found)
	for i, c := range scored {
		if found[i] {
			c.semantic, c.hasSem = float64(best[i]), true
		}
	}
}

func normalizeSemantic(cands map[*kdoc]*candidate, norm string) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, c := range cands {
		if c.hasSem {
			c.cosine = c.semantic
			lo, hi = math.Min(lo, c.semantic), math.Max(hi, c.semantic)
		}
	}
	if norm != NormMinMax || !(hi > lo) {
		return
	}
	for _, c := range cands {
		if c.hasSem {
			c.semantic = (c.semantic - lo) / (hi - lo)
		}
	}
}

// keyMap returns vector id → keyword index entry for the index, cached
// per index build and keyword index generation. Must be called with the
// keyword index read-locked.
func (r *Retriever) keyMap(dense *denseState) map[int64]*kdoc {
	r.keyMu.Lock()
	defer r.keyMu.Unlock()
	if r.keys != nil && r.keysFor == dense.ix && r.keysGen == r.kw.gen {
		return r.keys
	}
	m := make(map[int64]*kdoc, len(dense.meta.IDs))
	for k, id := range dense.meta.IDs {
		n, err := strconv.ParseInt(k, 10, 64)
		if err != nil {
			continue
		}
		if d := r.kw.byID[id]; d != nil {
			m[n] = d
		}
	}
	r.keys, r.keysFor, r.keysGen = m, dense.ix, r.kw.gen
	return m
}
