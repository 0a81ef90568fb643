package app

import (
	"context"
	"net/http"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/console"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/upconnect"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// identityOf is the Backend's identity service as the MCP server takes it
// (a nil interface when there is none).
func identityOf(b Backend) gateway.Identity {
	if b.Identity == nil {
		return nil
	}
	return b.Identity
}

// withBaseURL records the base URL a request reached the gateway at, for
// connect links when no public URL is configured.
func withBaseURL(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(w, r.WithContext(upconnect.WithBaseURL(r.Context(), upconnect.BaseURLOf(r))))
	})
}

// withSubjectToken passes the caller's validated inbound OAuth token to
// the identity service, for token exchange (never to an upstream). It
// runs after authentication: only a request whose principal is an OAuth
// subject carries one.
func withSubjectToken(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p, ok := auth.PrincipalFrom(r.Context()); ok && strings.HasPrefix(p, "token:") {
			if tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				r = r.WithContext(upconnect.WithSubjectToken(r.Context(), strings.TrimSpace(tok)))
			}
		}
		h.ServeHTTP(w, r)
	})
}

// connectedCounts fills, for the servers whose auth is per principal, how
// many principals are connected (never a grant).
func connectedCounts(ctx context.Context, id *upconnect.Service, servers []console.Server) {
	if id == nil {
		return
	}
	counts, err := id.Counts(ctx)
	if err != nil {
		return
	}
	for i := range servers {
		if id.PerPrincipal(servers[i].ID) {
			n := counts[servers[i].ID]
			servers[i].Connected = &n
		}
	}
}

// connections is the identity service as the console lists and revokes
// connections.
type connections struct{ svc *upconnect.Service }

// connectionsOf is the console's view of id (a nil interface when there
// is none).
func connectionsOf(id *upconnect.Service) console.Connections {
	if id == nil {
		return nil
	}
	return connections{id}
}

func (c connections) Connections(ctx context.Context, server string) ([]vault.Info, error) {
	return c.svc.Connections(ctx, server)
}

func (c connections) Revoke(ctx context.Context, principal, server string) (int, error) {
	return c.svc.RevokePrincipal(ctx, principal, server)
}
