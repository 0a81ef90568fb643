// Package upauth says how the gateway authenticates to one upstream server
// on behalf of its callers: the registry's per-server `auth` setting.
//
// Modes:
//   - static (default): the server's configured headers, the same for
//     every caller (a service identity).
//   - oauth: the gateway is an OAuth 2.1 client of the server's
//     authorization server and holds one grant per (principal, server),
//     obtained with the authorization code flow and PKCE after the user
//     opens a connect link.
//   - token_exchange: the caller's validated inbound OAuth token is
//     exchanged (RFC 8693) for a token whose audience is the server.
//   - user_secret: each user stores their own secret (a personal access
//     token) once, through a page the gateway serves; it is sent only to
//     that server.
//
// The inbound token is never forwarded as it is (token passthrough is
// forbidden by the MCP authorization specification): a config that asks
// for it is refused.
package upauth

import (
	"errors"
	"fmt"
	"net/textproto"
	"net/url"
	"strings"
)

// Modes of Config.Mode.
const (
	ModeStatic        = "static"
	ModeOAuth         = "oauth"
	ModeTokenExchange = "token_exchange"
	ModeUserSecret    = "user_secret"
)

// Config is a server's `auth` setting in the registry.
type Config struct {
	// Mode is static (default), oauth, token_exchange or user_secret.
	Mode string `yaml:"mode" json:"mode"`

	// Scopes asked for (oauth, token_exchange). Empty for oauth: the scope
	// of the server's 401 challenge, else its metadata's scopes_supported.
	Scopes []string `yaml:"scopes,omitempty" json:"scopes,omitempty"`

	// ClientID and ClientSecret are a client pre-registered with the
	// authorization server (oauth, token_exchange). ClientSecret may use
	// ${VAR}. Without a ClientID, oauth registers the gateway dynamically
	// (RFC 7591), or uses the gateway's client ID metadata document when
	// ClientMetadataDocument is set.
	ClientID     string `yaml:"client_id,omitempty" json:"client_id,omitempty"`
	ClientSecret string `yaml:"client_secret,omitempty" json:"client_secret,omitempty"`
	// ClientMetadataDocument: identify the gateway by the URL of the client
	// ID metadata document it serves, instead of registering.
	ClientMetadataDocument bool `yaml:"client_metadata_document,omitempty" json:"client_metadata_document,omitempty"`

	// AuthorizationServer overrides discovery (oauth): the issuer whose
	// RFC 8414 metadata to use. Normally found from the server's 401 and
	// RFC 9728 protected-resource metadata.
	AuthorizationServer string `yaml:"authorization_server,omitempty" json:"authorization_server,omitempty"`

	// TokenEndpoint and Audience configure token_exchange: where to
	// exchange, and the audience (or resource) of the token asked for
	// (default: the server's URL).
	TokenEndpoint string `yaml:"token_endpoint,omitempty" json:"token_endpoint,omitempty"`
	Audience      string `yaml:"audience,omitempty" json:"audience,omitempty"`

	// Header and Prefix say how a user_secret is sent (default
	// "Authorization" and, for it, "Bearer ").
	Header string  `yaml:"header,omitempty" json:"header,omitempty"`
	Prefix *string `yaml:"prefix,omitempty" json:"prefix,omitempty"`

	// ForwardInboundToken is refused: see the package comment.
	ForwardInboundToken bool `yaml:"forward_inbound_token,omitempty" json:"forward_inbound_token,omitempty"`
}

// ErrPassthrough is the error of a config that asks to forward the
// caller's own token.
var ErrPassthrough = errors.New("forwarding the caller's inbound token to an upstream (token passthrough) is forbidden by the MCP authorization specification; use mode token_exchange to get a token issued for the upstream, or mode oauth")

// ModeOf returns c's mode ("static" for a nil config or an empty mode).
func ModeOf(c *Config) string {
	if c == nil || c.Mode == "" {
		return ModeStatic
	}
	return c.Mode
}

// PerPrincipal reports whether c makes each caller reach the server as
// themselves (every mode but static).
func PerPrincipal(c *Config) bool { return ModeOf(c) != ModeStatic }

// Validate reports the first problem of c for a server of the given
// transport ("stdio", "sse", "streamable_http").
func (c *Config) Validate(transport string) error {
	if c == nil {
		return nil
	}
	if c.ForwardInboundToken || strings.EqualFold(c.Mode, "passthrough") || strings.EqualFold(c.Mode, "forward") {
		return fmt.Errorf("auth: %w", ErrPassthrough)
	}
	mode := ModeOf(c)
	switch mode {
	case ModeStatic:
		return nil
	case ModeOAuth, ModeTokenExchange, ModeUserSecret:
	default:
		return fmt.Errorf("auth: unknown mode %q (static, oauth, token_exchange or user_secret)", c.Mode)
	}
	if transport == "stdio" {
		return fmt.Errorf("auth: mode %s needs an sse or streamable_http server (a stdio server has no per-caller credentials)", mode)
	}
	checkURL := func(field, v string) error {
		if v == "" {
			return nil
		}
		u, err := url.Parse(v)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return fmt.Errorf("auth: %s %q must be an absolute https:// URL", field, v)
		}
		return nil
	}
	if err := checkURL("authorization_server", c.AuthorizationServer); err != nil {
		return err
	}
	if err := checkURL("token_endpoint", c.TokenEndpoint); err != nil {
		return err
	}
	if c.ClientSecret != "" && c.ClientID == "" {
		return errors.New("auth: client_secret needs client_id")
	}
	if c.ClientMetadataDocument && c.ClientID != "" {
		return errors.New("auth: client_metadata_document and client_id exclude each other (the document's URL is the client id)")
	}
	switch mode {
	case ModeTokenExchange:
		if c.TokenEndpoint == "" {
			return errors.New("auth: mode token_exchange needs token_endpoint")
		}
		if c.ClientID == "" {
			return errors.New("auth: mode token_exchange needs client_id (the gateway's client at the token endpoint)")
		}
	case ModeUserSecret:
		if strings.ContainsAny(c.Header, " :\r\n\x00") {
			return fmt.Errorf("auth: header %q is not a valid header name", c.Header)
		}
	}
	for _, s := range c.Scopes {
		if s == "" || strings.ContainsAny(s, " \"\\") {
			return fmt.Errorf("auth: scope %q is not a valid scope token", s)
		}
	}
	return nil
}

// SecretHeader returns the header name and value prefix a user_secret is
// sent with.
func (c *Config) SecretHeader() (name, prefix string) {
	name = "Authorization"
	if c != nil && c.Header != "" {
		name = c.Header
	}
	if c != nil && c.Prefix != nil {
		return name, *c.Prefix
	}
	if textproto.CanonicalMIMEHeaderKey(name) == "Authorization" {
		return name, "Bearer "
	}
	return name, ""
}

// Equal reports whether a and b are the same setting.
func Equal(a, b *Config) bool {
	if a == nil || b == nil {
		return ModeOf(a) == ModeOf(b) && (a == nil) == (b == nil)
	}
	pa, pb := "", ""
	if a.Prefix != nil {
		pa = "\x00" + *a.Prefix
	}
	if b.Prefix != nil {
		pb = "\x00" + *b.Prefix
	}
	return a.Mode == b.Mode && strings.Join(a.Scopes, " ") == strings.Join(b.Scopes, " ") &&
		a.ClientID == b.ClientID && a.ClientSecret == b.ClientSecret && a.ClientMetadataDocument == b.ClientMetadataDocument &&
		a.AuthorizationServer == b.AuthorizationServer && a.TokenEndpoint == b.TokenEndpoint && a.Audience == b.Audience &&
		a.Header == b.Header && pa == pb && a.ForwardInboundToken == b.ForwardInboundToken
}
