package retrieve

import (
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/retrieve/synonyms"
)

// maxSynonymTerms bounds the terms one query word adds.
const maxSynonymTerms = 4

// expandSynonyms returns the keyword query terms of query (qterms, each
// weighted by its count) followed by the stemmed synonyms of its words
// (pkg/retrieve/synonyms), each weighted w, that are not already query terms.
func expandSynonyms(query string, qterms []string, w float64) ([]string, map[string]float64) {
	counts, order := countTerms(qterms)
	weights := make(map[string]float64, len(counts))
	for t, c := range counts {
		weights[t] = float64(c)
	}
	seen := map[string]bool{}
	for _, word := range catalog.SplitName(query) {
		if seen[word] || stopWords[word] {
			continue
		}
		seen[word] = true
		added := 0
		for _, syn := range synonyms.Lookup(word) {
			if added >= maxSynonymTerms {
				break
			}
			for _, t := range Terms(syn) {
				if _, ok := weights[t]; ok {
					continue
				}
				weights[t] = w
				order = append(order, t)
				added++
			}
		}
	}
	return order, weights
}
