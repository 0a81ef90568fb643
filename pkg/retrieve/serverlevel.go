package retrieve

import "math"

// serverLevel adds the coarse level of two-level retrieval: the query is
// matched against each server as a whole (its description plus the union of
// its visible tools' text for the keyword part, its best-matching visible
// tool for the semantic part), and every tool of the server gets that score
// in its server term. Only visible tools take part, so tools hidden by the
// policy cannot lift their siblings.
func (r *Retriever) serverLevel(snap *visibleCorpus, cands map[*kdoc]*candidate, qterms []string) {
	kw := snap.scoreServers(qterms)
	var maxKw float64
	for _, v := range kw {
		maxKw = math.Max(maxKw, v)
	}
	semBest := map[string]float64{}
	hasSem := false
	for d, c := range cands {
		if c.hasSem {
			hasSem = true
			if v, ok := semBest[d.tool.Server]; !ok || c.semantic > v {
				semBest[d.tool.Server] = c.semantic
			}
		}
	}
	w := r.cfg.Weights
	for d, c := range cands {
		k := 0.0
		if maxKw > 0 {
			k = kw[d.tool.Server] / maxKw
		}
		if hasSem && w.Semantic+w.Keyword > 0 {
			c.server = (w.Semantic*semBest[d.tool.Server] + w.Keyword*k) / (w.Semantic + w.Keyword)
		} else {
			c.server = k
		}
	}
	// Tools with no signal of their own still belong to a matching server:
	// give them a candidate entry so that the server term can lift them.
	if !hasSem && maxKw > 0 {
		for srv, v := range kw {
			for _, d := range snap.byServer[srv] {
				if _, ok := cands[d]; !ok {
					cands[d] = &candidate{d: d, server: v / maxKw}
				}
			}
		}
	}
}
