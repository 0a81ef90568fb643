package retrieve

import "sort"

// Features are one candidate's ranking signals for one query, as a
// learned scorer (Experimental.Scorer) sees them.
type Features struct {
	ToolID string
	// Semantic is the cosine after SemanticNorm (0..1 with minmax);
	// Cosine the raw cosine; HasSemantic false when no vector answered.
	Semantic, Cosine float64
	HasSemantic      bool
	Keyword          float64 // BM25F / the query's best BM25F
	Server           float64 // the two-level server term
	Verb             float64 // action-verb agreement, -1..1
	Metadata         float64
	Penalty          float64
	Coverage         float64 // MatchSignals.Coverage
	NameCoverage     float64 // MatchSignals.NameCoverage
	// SemanticRank and KeywordRank are the candidate's 1-based ranks
	// among the candidates by each signal (0: no such signal).
	SemanticRank, KeywordRank int
	// QueryTerms is the number of distinct terms of the keyword query.
	QueryTerms int
	// Fused is the weighted fusion's score (without the penalty).
	Fused float64
}

// features returns the Features of every candidate of list (one query).
func features(list []*candidate) []Features {
	out := make([]Features, len(list))
	for i, c := range list {
		m := matchSignals(c)
		out[i] = Features{
			ToolID: c.d.tool.ID, Semantic: c.semantic, Cosine: c.cosine, HasSemantic: c.hasSem,
			Keyword: c.keyword, Server: c.server, Verb: c.verb, Metadata: c.metadata, Penalty: c.penalty,
			Coverage: m.Coverage, NameCoverage: m.NameCoverage, Fused: c.score - c.penalty,
		}
		if c.q != nil {
			out[i].QueryTerms = len(c.q.idf)
		}
	}
	rankBy(out, func(f *Features) (float64, bool) { return f.Semantic, f.HasSemantic }, func(f *Features, r int) { f.SemanticRank = r })
	rankBy(out, func(f *Features) (float64, bool) { return f.Keyword, f.Keyword > 0 }, func(f *Features, r int) { f.KeywordRank = r })
	return out
}

func rankBy(fs []Features, sig func(*Features) (float64, bool), set func(*Features, int)) {
	idx := make([]int, 0, len(fs))
	for i := range fs {
		if _, ok := sig(&fs[i]); ok {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		va, _ := sig(&fs[idx[a]])
		vb, _ := sig(&fs[idx[b]])
		if va != vb {
			return va > vb
		}
		return fs[idx[a]].ToolID < fs[idx[b]].ToolID
	})
	for r, i := range idx {
		set(&fs[i], r+1)
	}
}
