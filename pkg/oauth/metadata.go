package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// WellKnown is the path of the Protected Resource Metadata (RFC 9728).
const WellKnown = "/.well-known/oauth-protected-resource"

// Resource is the resource server's public face: the metadata document,
// the challenges of the 401s and, with OAuth not configured, the plain
// answer "this gateway takes API keys" where OAuth clients look for an
// authorization server. Its validator can be replaced while requests are
// served (the `oauth:` section of keys.yaml reloaded): a request sees the
// old one or the new one.
type Resource struct {
	// MCPPath is the MCP endpoint's path (default /mcp).
	MCPPath string
	// KeyHelp tells a user how to get an API key (one sentence).
	KeyHelp string
	// PublicURL is the gateway's public base URL (scheme://host[:port]).
	// Without a configured OAuth resource, the resource is named by it
	// rather than by the Host header a request happened to carry. Empty:
	// the request's host.
	PublicURL string

	v atomic.Pointer[Validator] // nil: OAuth not configured (API keys only)
}

// Validator returns the current validator, nil when OAuth is not
// configured.
func (res *Resource) Validator() *Validator {
	if res == nil {
		return nil
	}
	return res.v.Load()
}

// Tokens returns res as the auth.TokenValidator of the middleware: it
// validates with the current validator, and with none it answers
// auth.ErrNotAccessToken (every bearer is tried as an API key).
func (res *Resource) Tokens() auth.TokenValidator { return res }

// ValidateToken implements auth.TokenValidator.
func (res *Resource) ValidateToken(ctx context.Context, token string) (policy.Key, error) {
	if v := res.Validator(); v != nil {
		return v.ValidateToken(ctx, token)
	}
	return policy.Key{}, auth.ErrNotAccessToken
}

// IntrospectToken implements auth.OpaqueTokenValidator.
func (res *Resource) IntrospectToken(ctx context.Context, token string) (policy.Key, error) {
	if v := res.Validator(); v != nil {
		return v.IntrospectToken(ctx, token)
	}
	return policy.Key{}, auth.ErrNotAccessToken
}

// SignedToken implements auth.SignedTokenChecker.
func (res *Resource) SignedToken(token string) bool {
	v := res.Validator()
	return v != nil && v.SignedToken(token)
}

// Challenge returns the auth.Challenge naming this resource's metadata
// (it implements the middleware's Challenger: asked on every request).
func (res *Resource) Challenge() auth.Challenge {
	c := auth.Challenge{ResourceMetadata: res.MetadataURL}
	if v := res.Validator(); v == nil {
		c.NoCredentials = "this gateway takes API keys: send \"Authorization: Bearer <API key>\". " + res.keyHelp()
		c.InvalidKey = "invalid API key. " + res.keyHelp()
	} else {
		c.NoCredentials = "send \"Authorization: Bearer <token>\": an OAuth access token from " + v.cfg.Issuer +
			" (discovery: " + WellKnown + ") or an API key"
		c.Scope = strings.Join(v.cfg.ScopesSupported, " ")
	}
	return c
}

func (res *Resource) keyHelp() string {
	if res.KeyHelp != "" {
		return res.KeyHelp
	}
	return "Ask the gateway's operator for a key."
}

func (res *Resource) mcpPath() string {
	if res.MCPPath == "" {
		return "/mcp"
	}
	return res.MCPPath
}

// Routes registers the metadata endpoints on mux: the document at
// WellKnown and at WellKnown+MCPPath, and with OAuth not configured the
// registration and authorization-server paths OAuth clients try next,
// answered with the API key message.
func (res *Resource) Routes(mux *http.ServeMux) {
	mux.HandleFunc("GET "+WellKnown, res.serveMetadata)
	mux.HandleFunc("GET "+WellKnown+res.mcpPath(), res.serveMetadata)
	mux.HandleFunc("POST /register", res.refuseRegistration)
	mux.HandleFunc("GET /authorize", res.refuseRegistration)
}

// origin returns scheme://host of the public URL a request came to.
func origin(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p != "" {
		p, _, _ = strings.Cut(p, ",")
		if p = strings.TrimSpace(strings.ToLower(p)); p == "http" || p == "https" {
			scheme = p
		}
	}
	return scheme + "://" + r.Host
}

// ResourceURL is the resource identifier: the configured resource (or
// audience), else the MCP URL on the host the request came to.
func (res *Resource) ResourceURL(r *http.Request) string {
	if v := res.Validator(); v != nil {
		if v.cfg.Resource != "" {
			return v.cfg.Resource
		}
		if strings.HasPrefix(v.cfg.Audience, "http") {
			return v.cfg.Audience
		}
	}
	if res.PublicURL != "" {
		return strings.TrimSuffix(res.PublicURL, "/") + res.mcpPath()
	}
	return origin(r) + res.mcpPath()
}

// MetadataURL is the absolute URL of the metadata document for the
// resource (the path-suffixed form, RFC 9728 §3.1).
func (res *Resource) MetadataURL(r *http.Request) string {
	u, err := url.Parse(res.ResourceURL(r))
	if err != nil || u.Host == "" {
		return res.ResourceURL(r) // not reached: ResourceURL is absolute
	}
	return u.Scheme + "://" + u.Host + WellKnown + strings.TrimSuffix(u.Path, "/")
}

// metadata is RFC 9728's document, plus a plain-words description.
type metadata struct {
	Resource               string   `json:"resource"`
	AuthorizationServers   []string `json:"authorization_servers,omitempty"`
	ScopesSupported        []string `json:"scopes_supported,omitempty"`
	BearerMethodsSupported []string `json:"bearer_methods_supported"`
	ResourceName           string   `json:"resource_name"`
	Description            string   `json:"description"`
}

func (res *Resource) serveMetadata(w http.ResponseWriter, r *http.Request) {
	md := metadata{Resource: res.ResourceURL(r), BearerMethodsSupported: []string{"header"}, ResourceName: "toolrag MCP gateway"}
	if v := res.Validator(); v != nil {
		md.AuthorizationServers = []string{v.cfg.Issuer}
		md.ScopesSupported = v.cfg.ScopesSupported
		md.Description = "Send an OAuth access token from " + v.cfg.Issuer + " requested with resource=" + md.Resource +
			" (RFC 8707), or an API key, as \"Authorization: Bearer <token>\"."
	} else {
		md.Description = res.apiKeyMessage()
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "max-age=300")
	h.Set("Access-Control-Allow-Origin", "*")
	json.NewEncoder(w).Encode(md)
}

func (res *Resource) apiKeyMessage() string {
	return "This MCP gateway takes API keys, not OAuth: send the header \"Authorization: Bearer <API key>\" " +
		"(in mcp-remote: --header \"Authorization: Bearer <API key>\"). " + res.keyHelp()
}

// refuseRegistration answers an OAuth client's dynamic client registration
// (or authorization request) on a gateway without OAuth with an RFC 7591
// error whose description OAuth clients show to the user.
func (res *Resource) refuseRegistration(w http.ResponseWriter, r *http.Request) {
	if res.Validator() != nil {
		http.NotFound(w, r) // the authorization server registers clients, not the gateway
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client_metadata", "error_description": res.apiKeyMessage()})
}

// prefetchTimeout bounds the background fetch of the issuer's keys.
const prefetchTimeout = 15 * time.Second

// WithTokens makes res accept the access tokens of cfg (nil: API keys
// only) and returns it; see SetConfig.
func (res *Resource) WithTokens(ctx context.Context, cfg *Config, o Options) (*Resource, error) {
	if err := res.SetConfig(ctx, cfg, o); err != nil {
		return nil, err
	}
	return res, nil
}

// SetConfig replaces the validator with one for cfg (nil: OAuth off, API
// keys only). A cfg that does not validate leaves the current validator in
// force and returns the error. The new validator starts fetching the
// issuer's metadata and keys in the background, so that the first token
// does not wait for them (a failure is logged; tokens are refused until
// the issuer answers). On Lambda the validator lives as long as the
// process: the keys are fetched once per cold start, concurrently with its
// first load.
func (res *Resource) SetConfig(ctx context.Context, cfg *Config, o Options) error {
	if cfg == nil {
		if old := res.v.Swap(nil); old != nil {
			old.log.Info("oauth: access tokens are no longer accepted (no oauth section)")
		}
		return nil
	}
	v, err := New(*cfg, o)
	if err != nil {
		return err
	}
	log := v.log
	go func() {
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), prefetchTimeout)
		defer cancel()
		start := time.Now()
		if err := v.Prefetch(pctx); err != nil {
			log.Warn("oauth: cannot fetch the authorization server's keys yet; tokens are refused until it answers", "issuer", cfg.Issuer, "error", err)
			return
		}
		log.Info("oauth: authorization server keys fetched", "issuer", cfg.Issuer, "duration_ms", time.Since(start).Milliseconds())
	}()
	res.v.Store(v)
	log.Info("oauth: accepting access tokens", "issuer", cfg.Issuer, "audience", cfg.Audience, "grants", len(cfg.Grants))
	return nil
}
