package retrieve

import "sort"

// Pseudo-relevance feedback settings.
const (
	prfDocs   = 3   // top keyword tools read
	prfTerms  = 5   // terms added
	prfWeight = 0.3 // weight of an added term relative to a query term
)

// feedback expands the keyword query with the most distinctive terms of the
// first-pass best keyword matches and re-scores the keyword signal.
func (r *Retriever) feedback(snap *visibleCorpus, cands map[*kdoc]*candidate, qterms []string) {
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
		for term, tf := range c.d.termFreqs() {
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
