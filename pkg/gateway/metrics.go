package gateway

import "sync/atomic"

// Metrics counts gateway activity for /tool-rag/metrics.
type Metrics struct {
	Calls         atomic.Int64 // upstream tool calls attempted
	CallErrors    atomic.Int64 // upstream tool calls that failed
	CallsRejected atomic.Int64 // unknown/forbidden tools and invalid arguments
	Finds         atomic.Int64 // find_tools requests
	Rejected      atomic.Int64 // HTTP requests rejected by size or depth limits
	Relayed       atomic.Int64 // upstream sampling/elicitation requests put to a client
	RoundTrips    atomic.Int64 // 2026-07-28 tool calls that retried with inputResponses or requestState
	FastCalls     atomic.Int64 // tools/call requests answered by the gateway's own path (fastcall.go), not mcp-go's

	CancelChecks    atomic.Int64 // reads of a cancel or task record by a running call (cancels.go)
	CancelledRemote atomic.Int64 // calls cancelled by a record another instance wrote

	ResultsStored     atomic.Int64 // result blocks over the inline limit stored and linked (bigresult.go)
	ResultBytesStored atomic.Int64 // their bytes
	ResultsRead       atomic.Int64 // resources/read of a stored result
}
