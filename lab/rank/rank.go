// Package rank scores rankings against relevance judgements: recall@k,
// group recall, nDCG@10, MRR and hit@5 of each query, summed over queries
// and averaged. lab/eval measures the gateway's retrieval with it, and
// lab/train selects the model's best epoch on held-out tools.
package rank

import "math"

// Metrics are retrieval-quality figures averaged over queries.
type Metrics struct {
	Queries       int     `json:"queries"`
	RecallAt1     float64 `json:"recall@1"`
	RecallAt5     float64 `json:"recall@5"`
	RecallAt10    float64 `json:"recall@10"`
	GroupRecall5  float64 `json:"group_recall@5"`  // only over queries with groups
	GroupRecall10 float64 `json:"group_recall@10"` // only over queries with groups
	GroupQueries  int     `json:"group_queries"`
	NDCG10        float64 `json:"ndcg@10"`
	MRR           float64 `json:"mrr"`
	HitAt5        float64 `json:"hit@5"`
}

// RecallAt is the share of relevant ids found in the first k of ranked.
func RecallAt[ID comparable](ranked []ID, relevant map[ID]bool, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	found := 0
	for i, id := range ranked {
		if i >= k {
			break
		}
		if relevant[id] {
			found++
		}
	}
	return float64(found) / float64(len(relevant))
}

// GroupRecallAt is the share of groups with at least one member in the
// first k of ranked.
func GroupRecallAt[ID comparable](ranked []ID, groups [][]ID, k int) float64 {
	if len(groups) == 0 {
		return 0
	}
	top := map[ID]bool{}
	for i, id := range ranked {
		if i >= k {
			break
		}
		top[id] = true
	}
	found := 0
	for _, g := range groups {
		for _, id := range g {
			if top[id] {
				found++
				break
			}
		}
	}
	return float64(found) / float64(len(groups))
}

// NDCGAt is binary-relevance nDCG over the first k of ranked.
func NDCGAt[ID comparable](ranked []ID, relevant map[ID]bool, k int) float64 {
	if len(relevant) == 0 {
		return 0
	}
	var dcg, idcg float64
	for i, id := range ranked {
		if i >= k {
			break
		}
		if relevant[id] {
			dcg += 1 / math.Log2(float64(i)+2)
		}
	}
	for i := 0; i < len(relevant) && i < k; i++ {
		idcg += 1 / math.Log2(float64(i)+2)
	}
	return dcg / idcg
}

// ReciprocalRank is 1/rank of the first relevant id, 0 when none is
// ranked.
func ReciprocalRank[ID comparable](ranked []ID, relevant map[ID]bool) float64 {
	for i, id := range ranked {
		if relevant[id] {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// mean turns sums into means: the figures over n queries (or sets), the
// group recalls over groups (none of them when it is 0).
func (m *Metrics) mean(n, groups float64) {
	if n > 0 {
		m.RecallAt1 /= n
		m.RecallAt5 /= n
		m.RecallAt10 /= n
		m.NDCG10 /= n
		m.MRR /= n
		m.HitAt5 /= n
	}
	if groups > 0 {
		m.GroupRecall5 /= groups
		m.GroupRecall10 /= groups
	}
}

// Sum sums the figures of queries; its zero value is empty.
type Sum[ID comparable] struct {
	m Metrics
}

// Add scores one query's ranking (best first) against its relevant ids
// and, if it has any, its groups of interchangeable ids.
func (s *Sum[ID]) Add(ranked, relevant []ID, groups [][]ID) {
	rel := make(map[ID]bool, len(relevant))
	for _, id := range relevant {
		rel[id] = true
	}
	s.m.Queries++
	s.m.RecallAt1 += RecallAt(ranked, rel, 1)
	s.m.RecallAt5 += RecallAt(ranked, rel, 5)
	s.m.RecallAt10 += RecallAt(ranked, rel, 10)
	s.m.NDCG10 += NDCGAt(ranked, rel, 10)
	s.m.MRR += ReciprocalRank(ranked, rel)
	if RecallAt(ranked, rel, 5) > 0 {
		s.m.HitAt5++
	}
	if len(groups) > 0 {
		s.m.GroupQueries++
		s.m.GroupRecall5 += GroupRecallAt(ranked, groups, 5)
		s.m.GroupRecall10 += GroupRecallAt(ranked, groups, 10)
	}
}

// Result is the mean of the queries added.
func (s *Sum[ID]) Result() Metrics {
	m := s.m
	m.mean(float64(m.Queries), float64(m.GroupQueries))
	return m
}

// Macro is the unweighted mean of per-set figures (group recall over the
// sets that have groups); Queries is their total.
func Macro(sets map[string]Metrics) Metrics {
	var m Metrics
	groups := 0
	for _, s := range sets {
		m.Queries += s.Queries
		m.RecallAt1 += s.RecallAt1
		m.RecallAt5 += s.RecallAt5
		m.RecallAt10 += s.RecallAt10
		m.NDCG10 += s.NDCG10
		m.MRR += s.MRR
		m.HitAt5 += s.HitAt5
		if s.GroupQueries > 0 {
			groups++
			m.GroupQueries += s.GroupQueries
			m.GroupRecall5 += s.GroupRecall5
			m.GroupRecall10 += s.GroupRecall10
		}
	}
	m.mean(float64(len(sets)), float64(groups))
	return m
}
