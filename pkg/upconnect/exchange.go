package upconnect

// token_exchange (RFC 8693): the caller's validated inbound OAuth token is
// exchanged for a token issued for the upstream, cached per (principal,
// server) in the vault until shortly before it expires. The inbound token
// itself is never sent to the upstream.

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/vault"
)

type subjectTokenKey struct{}

// WithSubjectToken records the caller's validated inbound OAuth access
// token, the subject of a token exchange. Only the gateway's
// authentication may call it, after validating the token.
func WithSubjectToken(ctx context.Context, tok string) context.Context {
	return context.WithValue(ctx, subjectTokenKey{}, tok)
}

// exchange returns the headers of a token_exchange server for the caller.
func (s *Service) exchange(ctx context.Context, k vault.Key, keyID string, srv Server) (map[string]string, error) {
	g, err := s.cfg.Vault.Get(ctx, k)
	if err == nil && g.Kind == vault.KindExchange && (g.Expiry.IsZero() || s.cfg.Now().Add(refreshMargin).Before(g.Expiry)) {
		return map[string]string{"Authorization": "Bearer " + g.AccessToken}, nil
	}
	subject, _ := ctx.Value(subjectTokenKey{}).(string)
	if subject == "" {
		return nil, fmt.Errorf("server %s takes only callers signed in with OAuth (its token is obtained by token exchange from the caller's own token); an API key cannot be exchanged", k.Server)
	}
	a := srv.Auth
	form := url.Values{
		"grant_type":           {"urn:ietf:params:oauth:grant-type:token-exchange"},
		"subject_token":        {subject},
		"subject_token_type":   {"urn:ietf:params:oauth:token-type:access_token"},
		"requested_token_type": {"urn:ietf:params:oauth:token-type:access_token"},
	}
	aud := a.Audience
	if aud == "" {
		aud = srv.URL
	}
	form.Set("audience", aud)
	form.Set("resource", srv.URL)
	if len(a.Scopes) > 0 {
		form.Set("scope", strings.Join(a.Scopes, " "))
	}
	client := map[string]string{"client_id": a.ClientID, "client_secret": a.ClientSecret, "token_endpoint": a.TokenEndpoint}
	tr, err := s.tokenRequest(ctx, client, form)
	if err != nil {
		return nil, fmt.Errorf("token exchange for server %s failed: %w", k.Server, err)
	}
	ng := s.grantFrom(tr, map[string]string{"token_endpoint": a.TokenEndpoint}, keyID, vault.KindExchange)
	ng.RefreshToken = "" // never kept: the next exchange starts from the caller's current token
	if err := s.cfg.Vault.Put(ctx, k, ng); err != nil {
		s.log.WarnContext(ctx, "could not cache an exchanged token", "server", k.Server, "error", err)
	}
	return map[string]string{"Authorization": "Bearer " + ng.AccessToken}, nil
}
