package app

import (
	"net/http"

	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/upconnect"
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
