package retrieve

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
	semRank := ranks(list, func(c *candidate) (float64, bool) { return c.semantic, c.hasSem })
	kwRank := ranks(list, func(c *candidate) (float64, bool) { return c.keyword, c.keyword > 0 })
	out := make([]Features, len(list))
	for i, c := range list {
		m := matchSignals(c)
		out[i] = Features{
			ToolID: c.d.tool.ID, Semantic: c.semantic, Cosine: c.cosine, HasSemantic: c.hasSem,
			Keyword: c.keyword, Server: c.server, Verb: c.verb, Metadata: c.metadata, Penalty: c.penalty,
			Coverage: m.Coverage, NameCoverage: m.NameCoverage, Fused: c.score - c.penalty,
			SemanticRank: semRank[c], KeywordRank: kwRank[c],
		}
		if c.q != nil {
			out[i].QueryTerms = len(c.q.idf)
		}
	}
	return out
}
