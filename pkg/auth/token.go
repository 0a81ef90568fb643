package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// TokenValidator validates OAuth access tokens (pkg/oauth). The middleware
// asks it first: a bearer it does not recognise as one of its tokens
// (ErrNotAccessToken) is looked up as an API key.
type TokenValidator interface {
	// ValidateToken returns the principal's grant as a policy.Key whose ID
	// is the principal's id ("oauth:<sub>").
	ValidateToken(ctx context.Context, token string) (policy.Key, error)
}

// OpaqueTokenValidator is implemented by validators that can also check
// opaque tokens (RFC 7662 introspection); the middleware asks it for a
// bearer that is neither a JWT of the issuer nor a known API key.
type OpaqueTokenValidator interface {
	IntrospectToken(ctx context.Context, token string) (policy.Key, error)
}

var (
	// ErrNotAccessToken: the bearer is not a token of the configured
	// authorization server; it is tried as an API key.
	ErrNotAccessToken = errors.New("not an access token of the configured authorization server")
	// ErrInvalidToken: an access token that fails validation (401,
	// error="invalid_token").
	ErrInvalidToken = errors.New("invalid access token")
	// ErrInsufficientScope: a valid token that no grant matches (403,
	// error="insufficient_scope").
	ErrInsufficientScope = errors.New("insufficient scope")
	// ErrTokenCheckUnavailable: the authorization server's keys or
	// introspection endpoint cannot be reached (503).
	ErrTokenCheckUnavailable = errors.New("token validation is temporarily unavailable")
)

// Challenge builds the WWW-Authenticate challenges and the 401 wording.
// The zero value gives the plain RFC 6750 challenge.
type Challenge struct {
	// ResourceMetadata returns the absolute URL of the Protected Resource
	// Metadata document (RFC 9728) for a request, named in every
	// challenge as resource_metadata="…".
	ResourceMetadata func(r *http.Request) string
	// NoCredentials is the 401 message for a request without a bearer.
	NoCredentials string
	// InvalidKey is the 401 message for an unknown or revoked API key.
	InvalidKey string
	// Scope is named in insufficient_scope challenges.
	Scope string
}

// header is the WWW-Authenticate value: the RFC 6750 challenge with the
// resource metadata (RFC 9728), the error code and, where there is one,
// the reason in error_description, which clients show to their user.
func (c Challenge) header(r *http.Request, realm, code, description string) string {
	h := fmt.Sprintf(`Bearer realm=%q`, realm)
	if c.ResourceMetadata != nil {
		if u := c.ResourceMetadata(r); u != "" {
			h += fmt.Sprintf(`, resource_metadata=%q`, u)
		}
	}
	if code != "" {
		h += fmt.Sprintf(`, error=%q`, code)
	}
	if code == "insufficient_scope" && c.Scope != "" {
		h += fmt.Sprintf(`, scope=%q`, c.Scope)
	}
	if d := challengeText(description); code != "" && d != "" {
		h += `, error_description="` + d + `"`
	}
	return h
}

// challengeText makes s fit an RFC 6750 error_description: printable
// ASCII without '"' and '\\', at most 400 bytes.
func challengeText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case b.Len() >= 400:
			return strings.TrimSpace(b.String()) + "..."
		case r == '"':
			b.WriteByte('\'')
		case r == '\\':
			b.WriteByte('/')
		case r >= 0x20 && r <= 0x7e:
			b.WriteRune(r)
		case r == '\n' || r == '\t':
			b.WriteByte(' ')
		default:
			b.WriteByte('?')
		}
	}
	return strings.TrimSpace(b.String())
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
