package gateway

// Identity across the hop: a call to a server whose auth is per principal
// carries the caller's own credential (Config.Identity, pkg/upconnect),
// and a caller who has not connected that server gets the connect link as
// a -32042 URL elicitation (clients that declared it) or a tool error with
// the same link (others).

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Identity gives calls to per-principal servers the caller's credential.
type Identity interface {
	// Credential returns ctx carrying the caller's credential for server
	// (ctx as it is for a static server), or an error; an error with a
	// connect link (ConnectURL) asks the user to connect.
	Credential(ctx context.Context, server string) (context.Context, error)
	// Refused is told that server refused the caller's credential (HTTP
	// 401): the grant is dropped; the error asks the user again.
	Refused(ctx context.Context, server string) error
	// Status reports whether the caller still has to connect server, and
	// the link to do it.
	Status(ctx context.Context, server string) (needs bool, link string)
}

// connectLink is an error that asks the user to open a link.
type connectLink interface {
	ConnectURL() string
	ElicitationID() string
	ElicitationMessage() string
}

// withIdentity returns ctx with the caller's credential for srv, or the
// failure to answer the call with.
func (g *Server) withIdentity(ctx context.Context, srv string) (context.Context, error) {
	if g.cfg.Identity == nil {
		return ctx, nil
	}
	return g.cfg.Identity.Credential(ctx, srv)
}

// refused handles an upstream's 401 to a per-principal call: it returns
// the error that asks the user again, or nil when err is something else.
func (g *Server) refused(ctx context.Context, srv string, err error) error {
	if g.cfg.Identity == nil || !errors.Is(err, upstream.ErrUnauthorized) {
		return nil
	}
	return g.cfg.Identity.Refused(ctx, srv)
}

// linkFailure is the -32042 URL elicitation of a connect link.
func linkFailure(err error) *rpcFailure {
	var cl connectLink
	if !errors.As(err, &cl) {
		return nil
	}
	el := mcp.ElicitationParams{Mode: mcp.ElicitationModeURL, ElicitationID: cl.ElicitationID(), URL: cl.ConnectURL(), Message: cl.ElicitationMessage()}
	data, _ := json.Marshal(map[string]any{"elicitations": []mcp.ElicitationParams{el}})
	return &rpcFailure{code: mcp.URL_ELICITATION_REQUIRED, message: "This request requires more information.", data: data,
		elicit: &mcp.URLElicitationRequiredError{Elicitations: []mcp.ElicitationParams{el}}}
}

// connStates caches, for one find_tools request, each server's connection
// state for the caller.
type connStates map[string]connState

type connState struct {
	needs bool
	link  string
}

// markConnection marks a found tool whose server the caller has to
// connect first.
func (g *Server) markConnection(ctx context.Context, seen connStates, ft *foundTool) {
	if g.cfg.Identity == nil {
		return
	}
	st, ok := seen[ft.Server]
	if !ok {
		st.needs, st.link = g.cfg.Identity.Status(ctx, ft.Server)
		seen[ft.Server] = st
	}
	ft.NeedsConnection, ft.ConnectURL = st.needs, st.link
}
