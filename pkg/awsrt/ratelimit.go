package awsrt

import "time"

// Rate limit modes (TOOL_RAG_RATE_LIMIT): "instance", each gateway
// instance's token buckets (pkg/auth); "exact", also across all instances
// (auth.Exact counting in the sessions table, dynamo.RateCounter)
// in fixed windows of RateLimitWindow (TOOL_RAG_RATE_LIMIT_WINDOW
// seconds, default 60).
const (
	RateLimitInstance = "instance"
	RateLimitExact    = "exact"
)

// DefaultRateLimitWindow is the window of the exact rate limit.
const DefaultRateLimitWindow = time.Minute
