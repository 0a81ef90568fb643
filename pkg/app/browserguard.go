package app

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
)

// sameMachineOnly guards a gateway without authentication
// (TOOL_RAG_WITHOUT_AUTH, which listens on loopback only) against the web
// pages its user's browser opens, on every route:
//
//   - DNS rebinding: over a loopback connection, a Host that is not
//     localhost, 127.0.0.0/8 or ::1 is refused (the rule mcp-go applies to
//     /mcp), so a foreign name resolved to 127.0.0.1 reads nothing;
//   - an Origin other than the gateway's own (scheme aside: host and port
//     equal to Host) is refused, whatever the method;
//   - a state-changing request (anything but GET, HEAD and OPTIONS) that the
//     browser marks Sec-Fetch-Site cross-site or same-site (another port of
//     localhost is same-site) is refused, with or without Origin.
//
// Clients that are not browsers send neither header and are not affected.
func sameMachineOnly(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if msg := crossSiteReason(r); msg != "" {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusForbidden)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
			return
		}
		next.ServeHTTP(w, r)
	})
}

// crossSiteReason says why r is refused, or "".
func crossSiteReason(r *http.Request) string {
	if httpserve.ForeignHostOnLoopback(r) {
		return "forbidden: the Host header does not name this machine (a gateway without authentication answers only to localhost, 127.0.0.1 and ::1)"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || u.Host == "" || !strings.EqualFold(u.Host, r.Host) {
			return "forbidden: a request from another web origin (a gateway without authentication serves only its own pages)"
		}
	}
	switch r.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		return ""
	}
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return "forbidden: a state-changing request from another site (a gateway without authentication serves only its own pages)"
	}
	return ""
}
