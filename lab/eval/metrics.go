package eval

import (
	"math"
	"sort"
	"time"
)

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

// recallAt is the share of relevant ids found in the first k of ranked.
func recallAt(ranked []string, relevant map[string]bool, k int) float64 {
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

// groupRecallAt is the share of groups with at least one member in the
// first k of ranked.
func groupRecallAt(ranked []string, groups [][]string, k int) float64 {
	if len(groups) == 0 {
		return 0
	}
	top := map[string]bool{}
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

// ndcgAt is binary-relevance nDCG over the first k of ranked.
func ndcgAt(ranked []string, relevant map[string]bool, k int) float64 {
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

// reciprocalRank is 1/rank of the first relevant id, 0 when none is ranked.
func reciprocalRank(ranked []string, relevant map[string]bool) float64 {
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

// accumulator sums per-query figures.
type accumulator struct {
	m Metrics
}

func (a *accumulator) add(ranked []string, relevant []string, groups [][]string) {
	rel := make(map[string]bool, len(relevant))
	for _, id := range relevant {
		rel[id] = true
	}
	a.m.Queries++
	a.m.RecallAt1 += recallAt(ranked, rel, 1)
	a.m.RecallAt5 += recallAt(ranked, rel, 5)
	a.m.RecallAt10 += recallAt(ranked, rel, 10)
	a.m.NDCG10 += ndcgAt(ranked, rel, 10)
	a.m.MRR += reciprocalRank(ranked, rel)
	if recallAt(ranked, rel, 5) > 0 {
		a.m.HitAt5++
	}
	if len(groups) > 0 {
		a.m.GroupQueries++
		a.m.GroupRecall5 += groupRecallAt(ranked, groups, 5)
		a.m.GroupRecall10 += groupRecallAt(ranked, groups, 10)
	}
}

func (a *accumulator) result() Metrics {
	m := a.m
	m.mean(float64(m.Queries), float64(m.GroupQueries))
	return m
}

// percentile returns the p-th percentile (0..100, nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(p / 100 * float64(len(s))))
	if rank < 1 {
		rank = 1
	}
	if rank > len(s) {
		rank = len(s)
	}
	return s[rank-1]
}

// macro is the unweighted mean of per-set figures (group recall over the
// sets that have groups).
func macro(sets map[string]Metrics) Metrics {
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
