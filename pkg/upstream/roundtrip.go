package upstream

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// RoundTrip carries a 2026-07-28 client's multi round-trip through the
// gateway to an upstream on that protocol: the answers and the upstream's
// own state of a retry, and the capabilities the client declared on the
// request (so the upstream asks only what the client can answer). A
// tools/call made with a RoundTrip returns an upstream's input_required
// result as it is, instead of answering its requests through the Relay.
//
// An upstream on an earlier protocol asks with server-initiated requests
// during the call; those still go to the Relay.
type RoundTrip struct {
	Responses    mcp.InputResponses
	State        string
	Capabilities *mcp.ClientCapabilities
}

type roundTripKey struct{}

// WithRoundTrip makes the tools/call made with ctx take part in rt.
func WithRoundTrip(ctx context.Context, rt *RoundTrip) context.Context {
	return context.WithValue(ctx, roundTripKey{}, rt)
}

func roundTripFrom(ctx context.Context) *RoundTrip {
	rt, _ := ctx.Value(roundTripKey{}).(*RoundTrip)
	return rt
}

// caps is what a call of the round trip declares to the upstream: of the
// client's capabilities those it needs to know to ask the client for input
// (sampling, elicitation, roots), with the extensions the gateway's
// connections declare. Nil for a call outside a round trip.
func (rt *RoundTrip) caps() *mcp.ClientCapabilities {
	if rt == nil {
		return nil
	}
	c := statelessCaps()
	c.Sampling, c.Elicitation, c.Roots = nil, nil, nil
	if rt.Capabilities != nil {
		c.Sampling, c.Elicitation, c.Roots = rt.Capabilities.Sampling, rt.Capabilities.Elicitation, rt.Capabilities.Roots
	}
	return &c
}
