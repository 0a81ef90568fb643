package train

import "github.com/toolrag/mcp-gateway/lab/rank"

// topK returns the indexes of the k largest scores (ties by index).
func topK(scores []float32, k int) []int {
	return topKFunc(len(scores), k, func(i int) float64 { return float64(scores[i]) })
}

// topKFunc selects the k best of n items by score (ties by lower index)
// with a bounded insertion list: O(n·k) worst case, O(n) typically.
func topKFunc(n, k int, score func(int) float64) []int {
	if k <= 0 {
		return nil
	}
	idx := make([]int, 0, k+1)
	sc := make([]float64, 0, k+1)
	for i := 0; i < n; i++ {
		s := score(i)
		if len(idx) == k && s <= sc[k-1] {
			continue
		}
		p := len(idx)
		for p > 0 && sc[p-1] < s {
			p--
		}
		idx = append(idx, 0)
		sc = append(sc, 0)
		copy(idx[p+1:], idx[p:])
		copy(sc[p+1:], sc[p:])
		idx[p], sc[p] = i, s
		if len(idx) > k {
			idx, sc = idx[:k], sc[:k]
		}
	}
	return idx
}

// validate ranks every tool of a validation pair's dataset for its query
// with the current float table. It returns micro-averaged figures over all
// validation queries, the per-dataset figures, and the macro average of
// nDCG@10 over datasets in the first result's NDCG10 field (the model
// selection criterion), so that the big intent sets do not dominate.
func (tr *trainer) validate() (rank.Metrics, map[string]rank.Metrics) {
	D := tr.tab.D
	docs := make([]float32, len(tr.docBags)*D)
	parallel(tr.opts.Threads, len(tr.docBags), func(i int) {
		u := docs[i*D : i*D+D]
		if n := tr.tab.embed(tr.docBags[i], u); n > 0 {
			for j := range u {
				u[j] /= n
			}
		}
	})
	byDS := map[string][]int{}
	for i, t := range tr.corpus.Tools {
		byDS[t.Dataset] = append(byDS[t.Dataset], i)
	}
	rankings := make([][]int, len(tr.val))
	parallel(tr.opts.Threads, len(tr.val), func(qi int) {
		q := make([]float32, D)
		if n := tr.tab.embed(tr.valBags[qi], q); n > 0 && tr.lex != nil {
			for j := range q {
				q[j] /= n
			}
		}
		tools := byDS[tr.val[qi].Dataset]
		scores := make([]float32, len(tools))
		for k, ti := range tools {
			scores[k] = dot(q, docs[ti*D:ti*D+D])
			if tr.lex != nil {
				scores[k] = tr.lex.a*scores[k] + tr.lex.b*tr.lex.val[qi].dot(tr.lex.docs[ti])
			}
		}
		top := topK(scores, 10)
		for k := range top {
			top[k] = tools[top[k]]
		}
		rankings[qi] = top
	})
	sums := map[string]*rank.Sum[int]{}
	var all rank.Sum[int]
	for qi, p := range tr.val {
		rel := make([]int, len(p.ToolIDs))
		for i, id := range p.ToolIDs {
			rel[i] = tr.corpus.byID[id]
		}
		s := sums[p.Dataset]
		if s == nil {
			s = &rank.Sum[int]{}
			sums[p.Dataset] = s
		}
		s.Add(rankings[qi], rel, nil)
		all.Add(rankings[qi], rel, nil)
	}
	per := map[string]rank.Metrics{}
	for ds, s := range sums {
		per[ds] = s.Result()
	}
	m := all.Result()
	if len(per) > 0 {
		m.NDCG10 = rank.Macro(per).NDCG10
	}
	return m, per
}
