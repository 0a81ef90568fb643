package vindex

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
