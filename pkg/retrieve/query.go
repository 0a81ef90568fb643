package retrieve

import (
	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// kwQuery is the keyword side of one query: the distinct terms in query
// order with their weights, and for each original query term the extra
// terms that count as matching it (compound joins and splits).
type kwQuery struct {
	terms   []string // the query's own terms (Terms), with duplicates
	order   []string // distinct terms to score, query terms first
	weights map[string]float64
	alts    map[string][]string // query term → terms that also match it
	idf     map[string]float64  // query term → IDF over the visible tools
	verb    string              // the query's action family (verbs.go)
}

// compoundSplitWeight is the weight of each part of a query word split
// into two catalog words ("screenshot" → "screen", "shot").
const compoundSplitWeight = 0.5

// keywordQuery builds the keyword query. With Experimental.Compounds, two adjacent
// query words whose concatenation is a word of a tool name add that term
// ("roll back" → "rollback", "sign up" → "signup"), and a query word of 8
// or more letters that no visible tool holds is split into two catalog
// terms of 4 or more letters ("screenshot" → "screen" + "shot"). Both are decided against the visible vocabulary
// only, so they carry no catalog-specific rules.
func (r *Retriever) keywordQuery(snap *visibleCorpus, query string) *kwQuery {
	terms := Terms(query)
	counts, order := countTerms(terms)
	q := &kwQuery{terms: terms, order: order, weights: make(map[string]float64, len(counts)),
		verb: queryVerb(catalog.SplitName(query))}
	for t, c := range counts {
		q.weights[t] = float64(c)
	}
	q.idf = make(map[string]float64, len(counts))
	n := float64(snap.nVisible)
	for t := range counts {
		q.idf[t] = idf(n, float64(snap.df(t)))
	}
	if r.cfg.Synonyms {
		q.order, q.weights = expandSynonyms(query, terms, r.cfg.SynonymWeight)
	}
	if r.cfg.Compounds {
		r.addCompounds(snap, query, q)
	}
	return q
}

func (q *kwQuery) add(term string, w float64, of ...string) {
	if _, ok := q.weights[term]; !ok {
		q.order = append(q.order, term)
		q.weights[term] = w
	}
	if q.alts == nil {
		q.alts = map[string][]string{}
	}
	for _, o := range of {
		if o != "" && o != term {
			q.alts[o] = append(q.alts[o], term)
		}
	}
}

// visible reports whether some visible tool holds term.
func (s *visibleCorpus) visible(term string) bool {
	for _, e := range s.ix.postings(term) {
		if s.allowed[e.slot] {
			return true
		}
	}
	return false
}

// visibleInName reports whether some visible tool's name or title holds
// term.
func (s *visibleCorpus) visibleInName(term string) bool {
	for _, e := range s.ix.postings(term) {
		if _, tf := s.ix.entry(e); s.allowed[e.slot] && (tf[FieldName] > 0 || tf[FieldTitle] > 0) {
			return true
		}
	}
	return false
}

func (r *Retriever) addCompounds(snap *visibleCorpus, query string, q *kwQuery) {
	words := catalog.SplitName(query)
	termOf := func(w string) string {
		if stopWords[w] || len(w) < 2 {
			return ""
		}
		return stem(w)
	}
	for i, w := range words {
		if hasCJK(w) {
			continue
		}
		// Join with the next word: "roll back" → "rollback".
		if i+1 < len(words) && !hasCJK(words[i+1]) {
			j := stem(w + words[i+1])
			if len(w)+len(words[i+1]) >= 5 && snap.visibleInName(j) {
				q.add(j, 2, termOf(w), termOf(words[i+1])) // it stands for both words
			}
		}
		// Split a word no visible tool holds: "screenshot" → "screen shot".
		t := termOf(w)
		if t == "" || len(w) < 8 || isDigits(w) || snap.visible(t) {
			continue
		}
		best := -1
		for k := 4; k <= len(w)-4; k++ {
			a, b := w[:k], w[k:]
			if stopWords[a] || stopWords[b] {
				continue
			}
			if snap.visible(stem(a)) && snap.visible(stem(b)) {
				if best < 0 || min(k, len(w)-k) > min(best, len(w)-best) {
					best = k
				}
			}
		}
		if best > 0 {
			q.add(stem(w[:best]), compoundSplitWeight, t)
			q.add(stem(w[best:]), compoundSplitWeight, t)
		}
	}
}

// nameJoins returns the joined adjacent words of a tool name
// ("screen_shot_diff" → "screenshot", "shotdiff"), stemmed.
func nameJoins(name string, c stemCache) []string {
	words := catalog.SplitName(name)
	var out []string
	for i := 0; i+1 < len(words); i++ {
		a, b := words[i], words[i+1]
		if len(a)+len(b) < 5 || hasCJK(a) || hasCJK(b) || isDigits(a) || isDigits(b) {
			continue
		}
		out = append(out, c.stem(a+b))
	}
	return out
}
