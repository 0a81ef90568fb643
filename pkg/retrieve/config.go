package retrieve

import (
	"context"
	"log/slog"

	"github.com/toolrag/mcp-gateway/pkg/embed"
)

// Reranker scores (query, document) pairs jointly, for example a
// cross-encoder. Higher is better; scores should lie in [0, 1].
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Weights are the coefficients of the final score:
// Semantic×semantic + Keyword×keyword + Metadata×metadata + policy penalty.
type Weights struct {
	Semantic float64
	Keyword  float64
	Metadata float64
}

// DefaultWeights weigh the semantic signal at 0.7 of the keyword signal
// (both lie in [0,1] after the default min-max normalisation of the
// cosines) and metadata at 0.15. They were chosen on the DEV sets
// (docs/retrieval.md): equal weights were better in domain (ID-DEV) only,
// 0.7 on the agent-query DEV sets of real MCP servers and out of domain.
// The reference formula is {1.0, 0.25, 0.15} with SemanticNorm NormNone.
var DefaultWeights = Weights{Semantic: 0.7, Keyword: 1.0, Metadata: 0.15}

// PreviousWeights are the default weights before issue 17's re-weighing
// (evaluations compare against them).
var PreviousWeights = Weights{Semantic: 1.0, Keyword: 1.0, Metadata: 0.15}

// Fusion methods.
const (
	FusionWeighted = "weighted" // weighted sum of the signal values
	FusionRRF      = "rrf"      // weighted reciprocal-rank fusion
)

// Semantic normalisations.
const (
	NormNone   = "none"
	NormMinMax = "minmax"
)

// Merge methods for the results of decomposed sub-queries.
const (
	MergeRoundRobin = "roundrobin"
	MergeMax        = "max"
	MergeRRF        = "rrf" // reciprocal-rank fusion of the rankings
)

// Limits.
const (
	DefaultTopK       = 5
	MaxTopK           = 100
	MaxRerankPool     = 50
	DefaultCandidates = 200
	// DefaultServerWeight is the weight of the server-level term; it
	// improved recall and nDCG on both evaluation sets (docs/retrieval.md).
	DefaultServerWeight = 0.3
	// DefaultSynonymWeight is the weight of a synonym term relative to a
	// query term when Experimental.Synonyms is on.
	DefaultSynonymWeight = 0.3
	// DefaultVerbWeight is the weight of the action-verb agreement
	// feature, chosen on the DEV sets (docs/retrieval.md).
	DefaultVerbWeight = 0.1
	rrfK              = 60.0
	maxSubQueries     = 6
	maxQueryBytes     = 8192
	// MaxRelatedResults bounds the results of one request that list
	// related tools (the first ones; in a grouped request the first
	// MaxRelatedResults/len(queries) of each group, at least 2): each
	// costs a scan of its server's tools, so without a bound a request of
	// 8 queries × top_k 50 over servers of 2,000 tools cost ~40 normal
	// queries of CPU.
	MaxRelatedResults = 20
)

// Config configures a Retriever. Tools is required; everything else is
// optional. The ranking knobs that only evaluations (lab/eval) and tests
// set are in the embedded Experimental; their zero values are the
// production defaults.
type Config struct {
	Tools    ToolLister
	Index    IndexSource    // nil: keyword scan only
	Embedder embed.Embedder // embeds queries; required for the semantic term
	Reranker Reranker       // optional second stage on the shortlist
	// ServerUp reports upstream health; tools of a server for which it
	// returns false are withheld. nil means every server is up.
	ServerUp func(serverID string) bool

	Experimental

	Logger *slog.Logger
}

// Experimental holds the ranking knobs that only evaluations (lab/eval,
// docs/retrieval.md) and tests set. Every zero value is the production
// default, so a deployment leaves it zero.
type Experimental struct {
	Weights Weights // zero value: DefaultWeights
	Fusion  string  // FusionWeighted (default) or FusionRRF
	// SemanticNorm rescales the cosines of one query before the weighted
	// fusion: NormMinMax (default) maps the candidates' cosines to [0,1]
	// like the keyword signal, so that the weights do not depend on how
	// spread out an embedder's cosines are; NormNone keeps them.
	SemanticNorm string
	FieldWeights FieldWeights // BM25F boosts; zero value: DefaultFieldWeights

	// ServerWeight scales the server-level term of two-level scoring (the
	// query matched against each server as a whole, added to its tools).
	// Zero means DefaultServerWeight; a negative value turns it off.
	ServerWeight float64
	// ServerSemantic scales the semantic part of the server term (the
	// server's best tool cosine) against its keyword part: 0 means 1, a
	// negative value drops it (the server's keyword score alone).
	ServerSemantic float64
	// Decompose splits multi-step requests ("... and then ...", numbered
	// steps, "; ") into sub-queries whose rankings are merged with Merge.
	Decompose bool
	Merge     string // MergeRoundRobin (default), MergeMax or MergeRRF
	// By default the semantic signal of a multi-step request (one that
	// Decompose splits) is the best cosine of the whole request or any of
	// its steps, and each step nominates dense candidates; the keyword
	// signal and the ranking stay those of the whole request.
	// SemanticWholeOnly turns this off: the whole request's cosine only.
	SemanticWholeOnly bool
	// PRF enables pseudo-relevance feedback: the best keyword terms of the
	// first-pass top tools are added to the keyword query.
	PRF bool
	// Synonyms expands the keyword query with WordNet synonyms
	// (pkg/retrieve/synonyms) of its words, each weighted SynonymWeight (default
	// 0.3) relative to a query term.
	Synonyms      bool
	SynonymWeight float64

	// OutputSchemaText indexes the property names and descriptions of a
	// tool's outputSchema with its parameters (keyword side). Off: see
	// docs/retrieval.md for the measurement.
	OutputSchemaText bool

	// Compounds matches a query's split and joined words against the
	// catalog ("roll back" → "rollback", "screenshot" → "screen shot"),
	// decided against the visible vocabulary. Off by default: neutral on
	// the real-MCP DEV set and lower R@1/MRR on ID-DEV (docs/retrieval.md).
	// Tool names' joined words ("screen_shot" holds "screenshot") are
	// always indexed.
	Compounds bool
	// VerbWeight scales the action-verb agreement feature (+1 when the
	// query's action family — create, read, update, delete, start, stop,
	// send — is the tool's, -1 when they differ). Zero means
	// DefaultVerbWeight; negative turns it off.
	VerbWeight float64
	// CoverageWeight adds CoverageWeight × the candidate's query-term
	// coverage (MatchSignals.Coverage: the IDF-weighted share of the
	// query's terms its text holds) to the score. KeywordCoverage (0..1)
	// scales the keyword signal by (1 − KeywordCoverage + KeywordCoverage
	// × coverage), so a best keyword match that holds one generic word of
	// the query is not worth a full 1. Zero: off. Tried for issue 17 and
	// not adopted (docs/retrieval.md).
	CoverageWeight  float64
	KeywordCoverage float64
	// SemanticCoverage (0..1) scales the semantic weight of a query by
	// (1 − SemanticCoverage × the best candidate's coverage): a query
	// whose words a tool holds leans on the keyword side, one no tool
	// matches word for word on the dense side. Zero: off.
	SemanticCoverage float64
	// Scorer, when set, scores one query's candidates from their
	// Features instead of the weighted fusion (a learned ranking; and
	// lab/eval's feature dump). It returns one score per feature row, or
	// nil to keep the weighted fusion's scores.
	Scorer func(fs []Features) []float64
	// KeepToolRequest ranks a query as written; by default a request
	// for a tool around the capability ("find a tool to …", "… tool")
	// is taken off first (toolrequest.go).
	KeepToolRequest bool
	// Calibration maps a result's MatchSignals to its Match level (zero
	// value: DefaultCalibration).
	Calibration Calibration
	// Related is how many related tools each result lists (zero:
	// DefaultRelated; negative: none).
	Related int
	// RelatedPrior ranks the related candidates (tools of the result's
	// server sharing its object or named by its description) by what
	// co-needed tool pairs of training tasks have in common; nil means
	// DefaultRelatedPrior. RelatedStructureOnly ranks them by the catalog
	// structure alone (object overlap, doubled for another action).
	RelatedPrior         *RelatedPrior
	RelatedStructureOnly bool

	RerankPool int // shortlist size for the reranker, at most MaxRerankPool (default)
	// Candidates is how many tools each of the dense and the keyword
	// signal nominates per query (default 200); both signals are computed
	// exactly for the union.
	Candidates int

	// StalePenalty is added to tools whose server was unreachable at the
	// last sync (default -0.05); ScopePenalty to tools whose permission
	// scope exceeds the requested one (default -0.1). Both are the
	// "policy_penalty" of the score formula. DisablePenalties turns both
	// off.
	StalePenalty     float64
	ScopePenalty     float64
	DisablePenalties bool
}
