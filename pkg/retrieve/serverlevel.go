package retrieve

import "math"

// serverLevel adds the coarse level of two-level retrieval: the query is
// matched against each server as a whole (its description plus the union of
// its visible tools' text for the keyword part, its best-matching visible
// tool for the semantic part), and every tool of the server gets that score
// in its server term. Only visible tools take part, so tools hidden by the
// policy cannot lift their siblings. kw are the servers' keyword scores
// (serverScores).
func (r *Retriever) serverLevel(snap *visibleCorpus, cands map[*kdoc]*candidate, kw []float64) {
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
	ws := w.Semantic
	switch {
	case r.cfg.ServerSemantic < 0:
		ws = 0
	case r.cfg.ServerSemantic > 0:
		ws *= r.cfg.ServerSemantic
	}
	for d, c := range cands {
		srv := snap.srvOf[d.slot]
		k := 0.0
		if maxKw > 0 {
			k = kw[srv] / maxKw
		}
		if hasSem && ws+w.Keyword > 0 {
			c.server = (ws*semBest[srv] + w.Keyword*k) / (ws + w.Keyword)
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
func (r *Retriever) serverScores(snap *visibleCorpus, qterms []string) []float64 {
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
