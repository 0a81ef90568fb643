package oauth

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
)

// WellKnown is the path of the Protected Resource Metadata (RFC 9728).
const WellKnown = "/.well-known/oauth-protected-resource"

// Resource is the resource server's public face: the metadata document,
// the challenges of the 401s and, with OAuth not configured, the plain
// answer "this gateway takes API keys" where OAuth clients look for an
// authorization server.
type Resource struct {
	// Validator is nil when OAuth is not configured (API keys only).
	Validator *Validator
	// MCPPath is the MCP endpoint's path (default /mcp).
	MCPPath string
	// KeyHelp tells a user how to get an API key (one sentence).
	KeyHelp string
}

// Tokens returns the validator for auth.Config.Tokens (nil interface when
// OAuth is not configured).
func (res *Resource) Tokens() auth.TokenValidator {
	if res == nil || res.Validator == nil {
		return nil
	}
	return res.Validator
}

// Challenge returns the auth.Challenge naming this resource's metadata.
func (res *Resource) Challenge() auth.Challenge {
	c := auth.Challenge{ResourceMetadata: res.MetadataURL}
	if res.Validator == nil {
		c.NoCredentials = "this gateway takes API keys: send \"Authorization: Bearer <API key>\". " + res.keyHelp()
		c.InvalidKey = "invalid API key. " + res.keyHelp()
	} else {
		c.NoCredentials = "send \"Authorization: Bearer <token>\": an OAuth access token from " + res.Validator.cfg.Issuer +
			" (discovery: " + WellKnown + ") or an API key"
		c.Scope = strings.Join(res.Validator.cfg.ScopesSupported, " ")
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
	if res.Validator == nil {
		mux.HandleFunc("POST /register", res.refuseRegistration)
		mux.HandleFunc("GET /authorize", res.refuseRegistration)
	}
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
	if v := res.Validator; v != nil {
		if v.cfg.Resource != "" {
			return v.cfg.Resource
		}
		if strings.HasPrefix(v.cfg.Audience, "http") {
			return v.cfg.Audience
		}
	}
	return origin(r) + res.mcpPath()
}

// MetadataURL is the absolute URL of the metadata document for the
// resource (the path-suffixed form, RFC 9728 §3.1).
func (res *Resource) MetadataURL(r *http.Request) string {
	u, err := url.Parse(res.ResourceURL(r))
	if err != nil || u.Host == "" {
		return origin(r) + WellKnown + res.mcpPath()
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
	if v := res.Validator; v != nil {
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
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-store")
	h.Set("Access-Control-Allow-Origin", "*")
	w.WriteHeader(http.StatusBadRequest)
	json.NewEncoder(w).Encode(map[string]string{"error": "invalid_client_metadata", "error_description": res.apiKeyMessage()})
}

// prefetchTimeout bounds the background fetch of the issuer's keys.
const prefetchTimeout = 15 * time.Second

// WithTokens returns res accepting the access tokens of cfg (nil: res
// itself, API keys only) and starts fetching the issuer's metadata and
// keys in the background, so that the first token does not wait for them
// (a failure is logged; tokens are refused until the issuer answers).
// The validator lives as long as the process: on Lambda, the keys are
// fetched once per cold start, concurrently with its first load.
func (res *Resource) WithTokens(ctx context.Context, cfg *Config, o Options) (*Resource, error) {
	if cfg == nil {
		return res, nil
	}
	v, err := New(*cfg, o)
	if err != nil {
		return nil, err
	}
	out := *res
	out.Validator = v
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
	log.Info("oauth: accepting access tokens", "issuer", cfg.Issuer, "audience", cfg.Audience, "grants", len(cfg.Grants))
	return &out, nil
}
