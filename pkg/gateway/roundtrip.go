package gateway

// Multi round-trip requests (MCP 2026-07-28) through the gateway.
//
// An upstream on the 2026-07-28 protocol that needs the user (elicitation)
// or the client's LLM (sampling) during a tools/call answers with an
// input_required result: the requests, and an opaque requestState of its
// own. The gateway hands the requests to its 2026-07-28 client unchanged,
// with a requestState of its own instead: the upstream's state, the server
// and tool, a digest of the arguments, the caller's principal and an expiry,
// sealed with Config.StateKey (AES-256-GCM, internal/sealed). On the client's
// retry with inputResponses the gateway opens it, checks that it was made
// for this principal, tool and arguments and has not expired, and forwards
// the answers and the upstream's own state to the same upstream. Nothing is
// remembered between the two requests, so the retry may reach any instance
// that holds the same key (on AWS Lambda: any instance).
//
// The client's per-request capabilities go to the upstream with the call,
// so it asks only what the client can answer; a request the client did not
// declare is refused rather than passed on.

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/sealed"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// statePurpose binds the sealed state to its use.
const statePurpose = "toolrag input_required v1"

// inputState is what the gateway's requestState holds.
type inputState struct {
	Server    string `json:"s"`
	Tool      string `json:"t"` // catalog tool id
	Args      string `json:"a"` // argsDigest of the call's arguments
	Principal string `json:"p"`
	Up        string `json:"u,omitempty"` // the upstream's own requestState
}

type retryKey struct{}

// withRetry marks the call made with ctx as one that may answer with
// input_required (a direct call or run_tool; not the items of run_tools)
// and keeps the multi round-trip fields of the client's tools/call.
func withRetry(ctx context.Context, p mcp.MultiRoundTripParams) context.Context {
	return context.WithValue(ctx, retryKey{}, &p)
}

func retryFrom(ctx context.Context) *mcp.MultiRoundTripParams {
	p, _ := ctx.Value(retryKey{}).(*mcp.MultiRoundTripParams)
	return p
}

// argsDigest identifies a call's arguments (encoding/json sorts map keys).
func argsDigest(args map[string]any) string {
	raw, _ := json.Marshal(args)
	sum := sha256.Sum256(raw)
	return base64.RawURLEncoding.EncodeToString(sum[:16])
}

// errStateRefused words a requestState the gateway will not use.
var errStateRefused = errors.New("the requestState of this retry was refused")

// roundTrip prepares the upstream call of a 2026-07-28 client's tool call:
// the client's capabilities, and on a retry its answers and the upstream's
// state, opened from the gateway's sealed requestState. Other clients' calls
// are left as they are.
func (g *Server) roundTrip(ctx context.Context, srv, toolID, principal string, args map[string]any) (context.Context, error) {
	p := retryFrom(ctx)
	if p == nil || !server.IsModernRequest(ctx) {
		return ctx, nil
	}
	rt := &upstream.RoundTrip{Responses: p.InputResponses}
	if caps, known := clientCapabilities(ctx); known {
		rt.Capabilities = &caps
	}
	if len(p.InputResponses) > 0 || p.RequestState != "" {
		g.Metrics.RoundTrips.Add(1)
		if p.RequestState != "" {
			var st inputState
			switch err := g.box.Open(statePurpose, p.RequestState, &st); {
			case errors.Is(err, sealed.ErrExpired):
				return nil, fmt.Errorf("%w: it expired (a client has %s to answer); call the tool again without inputResponses and requestState", errStateRefused, g.cfg.InputTTL)
			case err != nil:
				return nil, fmt.Errorf("%w: it was not issued by this gateway or was altered; call the tool again without inputResponses and requestState", errStateRefused)
			case st.Principal != principal || st.Server != srv || st.Tool != toolID || st.Args != argsDigest(args):
				// The same words for another principal's state and for
				// another call's: neither says whose it was.
				return nil, fmt.Errorf("%w: it was issued for another call; retry with the arguments of the call that asked, or call again without inputResponses and requestState", errStateRefused)
			}
			rt.State = st.Up
		}
	}
	return upstream.WithRoundTrip(ctx, rt), nil
}

// inputRequired turns an upstream's input_required result into the
// gateway's: the same requests, the gateway's sealed state. A request the
// client did not declare support for is refused (the client must not be
// sent it).
func (g *Server) inputRequired(ctx context.Context, res *mcp.CallToolResult, srv, toolID, principal string, args map[string]any) (*mcp.CallToolResult, error) {
	caps, _ := clientCapabilities(ctx)
	for _, r := range res.InputRequests {
		switch {
		case r.Method == mcp.MethodElicitationCreate && caps.Elicitation == nil,
			r.Method == mcp.MethodSamplingCreateMessage && caps.Sampling == nil,
			r.Method == mcp.MethodListRoots && caps.Roots == nil:
			return nil, fmt.Errorf("the server asked for %s, which the gateway's client did not declare in its capabilities", r.Method)
		}
	}
	token, err := g.box.Seal(statePurpose, inputState{Server: srv, Tool: toolID, Args: argsDigest(args), Principal: principal, Up: res.RequestState}, g.cfg.InputTTL)
	if err != nil {
		return nil, fmt.Errorf("the gateway could not seal the request state: %w", err)
	}
	g.Metrics.Relayed.Add(int64(len(res.InputRequests)))
	out := &mcp.CallToolResult{Result: mcp.Result{ResultType: mcp.ResultTypeInputRequired}}
	out.InputRequests, out.RequestState = res.InputRequests, token
	return out, nil
}
