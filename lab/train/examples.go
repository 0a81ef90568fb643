package train

import (
	"math"
	"math/rand/v2"
	"sort"
)

// mineHard finds, per training pair, the best BM25 matches among the
// training tools of the pair's dataset that are not positives. When the
// pair's first tool names its server, the first ServerNegatives places go
// to the other tools of that server (best BM25 match first, then in id
// order).
func (tr *trainer) mineHard() {
	byDS := map[string][]int32{}
	byServer := map[string][]int32{} // dataset + "\x00" + server → tools
	for i, t := range tr.corpus.Tools {
		if !tr.heldOut[t.ID] && t.Text == "" {
			byDS[t.Dataset] = append(byDS[t.Dataset], int32(i))
			if t.Server != "" {
				k := t.Dataset + "\x00" + t.Server
				byServer[k] = append(byServer[k], int32(i))
			}
		}
	}
	index := map[string]*bm25{}
	for ds, tools := range byDS {
		bags := make([]bag, len(tools))
		for k, ti := range tools {
			bags[k] = tr.docBags[ti]
		}
		index[ds] = newBM25(bags)
	}
	tr.hard = make([][]int32, len(tr.pairs))
	pool := tr.opts.HardPool
	parallel(tr.opts.Threads, len(tr.pairs), func(i int) {
		p := tr.pairs[i]
		ix, tools := index[p.Dataset], byDS[p.Dataset]
		if ix == nil {
			return // auxiliary pairs: in-batch negatives only
		}
		srv := tr.corpus.Tools[tr.pairPos[i][0]].Server
		k := pool + len(tr.pairPos[i])
		if srv != "" && tr.opts.ServerNegatives > 0 {
			k = len(tools) // siblings may rank anywhere
		}
		hits := ix.search(tr.qBags[i], k, nil)
		if srv != "" && tr.opts.ServerNegatives > 0 {
			siblings := byServer[p.Dataset+"\x00"+srv]
			isSibling := map[int32]bool{}
			for _, ti := range siblings {
				isSibling[ti] = true
			}
			add := func(ti int32) {
				if len(tr.hard[i]) < tr.opts.ServerNegatives && isSibling[ti] && !contains(tr.pairPos[i], ti) && !contains(tr.hard[i], ti) {
					tr.hard[i] = append(tr.hard[i], ti)
				}
			}
			for _, h := range hits {
				add(tools[h])
			}
			for _, ti := range siblings {
				add(ti)
			}
		}
		for _, h := range hits {
			ti := tools[h]
			if len(tr.hard[i]) >= pool {
				break
			}
			if !contains(tr.pairPos[i], ti) && !contains(tr.hard[i], ti) {
				tr.hard[i] = append(tr.hard[i], ti)
			}
		}
	})
}

func contains(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// epochExamples draws the examples of one epoch: every (pair, positive)
// of each tool, capped at MaxPerTool × dataset weight per tool, shuffled.
func (tr *trainer) epochExamples(rng *rand.Rand) []example {
	byTool := map[int32][]example{}
	var order []int32
	for i, pos := range tr.pairPos {
		for _, ti := range pos {
			if _, ok := byTool[ti]; !ok {
				order = append(order, ti)
			}
			byTool[ti] = append(byTool[ti], example{pair: int32(i), pos: ti})
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	var out, aux []example
	for _, ti := range order {
		ex := byTool[ti]
		if tr.corpus.Tools[ti].Text != "" {
			aux = append(aux, ex...)
			continue
		}
		limit := tr.opts.MaxPerTool
		if w, ok := tr.opts.DatasetWeight[tr.corpus.Tools[ti].Dataset]; ok {
			limit = int(math.Round(float64(limit) * w))
			if rep := int(math.Round(w)); rep > 1 {
				one := ex
				ex = make([]example, 0, len(one)*rep)
				for range rep {
					ex = append(ex, one...)
				}
			}
		}
		if len(ex) > limit {
			rng.Shuffle(len(ex), func(i, j int) { ex[i], ex[j] = ex[j], ex[i] })
			ex = ex[:limit]
		}
		out = append(out, ex...)
	}
	if len(aux) > 0 {
		rng.Shuffle(len(aux), func(i, j int) { aux[i], aux[j] = aux[j], aux[i] })
		out = append(out, aux[:min(len(aux), tr.opts.WordNetPerEpoch)]...)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}
