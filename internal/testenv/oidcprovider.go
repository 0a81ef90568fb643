package testenv

import (
	"testing"
	"time"
)

// OIDCProvider is a real OpenID Connect / OAuth 2 authorization server (npm
// oidc-provider) on 127.0.0.1 with dynamic client registration, PKCE,
// refresh tokens, resource indicators and a token exchange grant, started
// by StartOIDCProvider. Its interaction approves at once as the user named
// by the x_user parameter of the authorization request.
type OIDCProvider struct {
	AuthServer
}

// The client pre-registered for token exchange (client_secret_basic).
const (
	ExchangeClientID     = "exchanger"
	ExchangeClientSecret = "exchanger-secret"
)

// StartOIDCProvider starts oidcprovider.mjs with Node 22; it stops with
// the test.
func StartOIDCProvider(t testing.TB) *OIDCProvider {
	t.Helper()
	NPMModule(t, "oidc-provider")
	var v struct{ Issuer, Control string }
	startNode(t, t.Cleanup, "oidc-provider", 30*time.Second, &v, "oidcprovider.mjs")
	return &OIDCProvider{AuthServer{Issuer: v.Issuer, control: v.Control}}
}

// SignToken signs a token with the provider's key carrying claims (iss,
// iat, exp and jti are set), e.g. an inbound token for the gateway.
func (p *OIDCProvider) SignToken(t testing.TB, claims map[string]any) string {
	t.Helper()
	var out struct{ Token string }
	p.call(t, "/sign", map[string]any{"claims": claims}, &out)
	return out.Token
}

// EndGrants ends the user's grants at the provider (as when they revoke
// the application there): their refresh tokens stop working.
func (p *OIDCProvider) EndGrants(t testing.TB, account string) int {
	t.Helper()
	var out struct{ Ended int }
	p.call(t, "/end-grants", map[string]string{"account": account}, &out)
	return out.Ended
}

// OIDCStats is what the provider counted.
type OIDCStats struct {
	Grants        map[string]int // token requests per grant_type
	Registrations int            // successful dynamic client registrations
}

// OIDCStats returns the provider's counts.
func (p *OIDCProvider) OIDCStats(t testing.TB) OIDCStats {
	t.Helper()
	var out OIDCStats
	p.call(t, "/stats", struct{}{}, &out)
	return out
}
