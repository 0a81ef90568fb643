package vindex

import (
	"sync"
)

// MaxDots is MaxDot for many ids at once: best[i] is the largest inner
// product of the vector stored under ids[i] with any of qs (queries of the
// wrong length are skipped) and ok[i] whether there was one. It takes the
// read lock once and, for a quantised index, turns each query into code
// weights once (as Search does) instead of once per id. best and ok must
// have len(ids) elements.
func (ix *Index) MaxDots(ids []int64, qs [][]float32, best []float32, ok []bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	for i := range ids {
		best[i], ok[i] = 0, false
	}
	dim := ix.dim
	for _, q := range qs {
		if len(q) != dim {
			continue
		}
		w, bias := q, float32(0)
		if ix.sq != nil {
			w, bias = ix.sq.query(q)
		}
		for i, id := range ids {
			p, found := ix.pos[id]
			if !found {
				continue
			}
			var d float32
			if ix.sq != nil {
				d = bias + dotCodes(w, ix.codes[int(p)*dim:(int(p)+1)*dim])
			} else {
				d = Dot(q, ix.vecs[int(p)*dim:(int(p)+1)*dim])
			}
			if !ok[i] || d > best[i] {
				best[i], ok[i] = d, true
			}
		}
	}
}

// SearchMultiSplit is SearchMulti with the stored rows split into up to
// parts ranges scanned on their own goroutines, every range against every
// query, and the ranges' best k merged: the same hits as SearchMulti, with
// the scan's memory traffic shared instead of repeated (splitting the
// queries instead makes every goroutine read the whole index). allow is
// still called at most once per stored vector, but from several
// goroutines at once: it must be safe for concurrent use.
func (ix *Index) SearchMultiSplit(qs [][]float32, k int, allow func(id int64) bool, parts int) [][]Hit {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	n := len(ix.ids)
	rows := blockRows
	if len(qs) > 1 && ix.dim > 0 {
		width := 4 * ix.dim
		if ix.sq != nil {
			width = ix.dim
		}
		rows = min(blockRows, max(8, multiBlockBytes/width))
	}
	// Ranges of whole blocks, at least 8 blocks each.
	parts = min(parts, n/(8*rows))
	if parts <= 1 {
		return ix.search(qs, k, allow, rows, 0, n)
	}
	per := (n/parts + rows - 1) / rows * rows
	got := make([][][]Hit, parts)
	var wg sync.WaitGroup
	for p := range parts {
		lo, hi := p*per, min(n, (p+1)*per)
		wg.Go(func() { got[p] = ix.search(qs, k, allow, rows, lo, hi) })
	}
	wg.Wait()
	out := make([][]Hit, len(qs))
	for i := range qs {
		var all []Hit
		for p := range parts {
			all = append(all, got[p][i]...)
		}
		if all == nil {
			continue
		}
		sortHits(all)
		out[i] = all[:min(k, len(all))]
	}
	return out
}
