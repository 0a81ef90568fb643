// Package retrieve ranks catalog tools for a query: a hybrid of dense
// (embedding) similarity, BM25F keyword scoring and metadata matches,
// scoped by the caller's policy.
package retrieve

import (
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Request is one retrieval query.
type Request struct {
	Query           string
	TopK            int
	Policy          policy.Policy // already narrowed by allowed_servers
	ToolType        string        // optional: rewards tools of this type
	PermissionScope string        // optional: rewards tools of this scope
}

// Result is one ranked tool.
type Result struct {
	Tool   catalog.Tool
	Score  float64
	Reason string // human-readable: which terms and signals matched
	// Match is MatchStrong, MatchPartial or MatchWeak: how well the tool
	// answers the query, from Signals, which (unlike Score) mean the same
	// for every query.
	Match   string
	Signals MatchSignals
	// Related are the ids of up to Config.Related visible tools used
	// together with this one (prerequisites and companions).
	Related []string
}

// Response is the ranked list. FallbackUsed is true when no vector index
// was available and a keyword scan answered instead. Loading is true when
// the catalog was still being loaded for the first time (a gateway that
// started with an empty catalog and has not finished its first sync): the
// results, if any, are incomplete.
type Response struct {
	Results      []Result
	FallbackUsed bool
	Loading      bool
}
