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

func (c Challenge) header(r *http.Request, realm, code string) string {
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
	return h
}

// tokenOutcome answers a request whose token validation failed and
// reports whether it did (false: fall through to the API key lookup).
func (cfg Config) tokenFailure(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case errors.Is(err, ErrNotAccessToken):
		return false
	case errors.Is(err, ErrTokenCheckUnavailable):
		cfg.Counters.LookupErrors.Add(1)
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, ErrInsufficientScope):
		cfg.Counters.Failures.Add(1)
		w.Header().Set("WWW-Authenticate", cfg.Challenge.header(r, cfg.Realm, "insufficient_scope"))
		writeError(w, http.StatusForbidden, err.Error())
	default:
		cfg.Counters.Failures.Add(1)
		w.Header().Set("WWW-Authenticate", cfg.Challenge.header(r, cfg.Realm, "invalid_token"))
		writeError(w, http.StatusUnauthorized, err.Error())
	}
	return true
}

func orDefault(s, def string) string {
	if strings.TrimSpace(s) == "" {
		return def
	}
	return s
}
