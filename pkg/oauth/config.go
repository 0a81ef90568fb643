// Package oauth makes the gateway an OAuth 2.1 resource server as the MCP
// authorization specification asks: it publishes Protected Resource
// Metadata (RFC 9728), validates access tokens from one configured
// authorization server (signed JWTs checked against its JWKS, or opaque
// tokens through RFC 7662 introspection), and maps a token's claims to the
// same policy.Policy an API key grants, so every surface is enforced the
// same way for both kinds of caller.
//
// JWT validation uses github.com/coreos/go-oidc/v3 (signature, issuer,
// expiry, algorithm allow-list, through go-jose); this package adds the
// rate-limited JWKS cache, the audience check (RFC 8707) and a small,
// explicit clock skew for nbf (see docs/oauth.md).
package oauth

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/toolrag/mcp-gateway/internal/duration"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Config configures token validation and the claims → policy mapping. It
// is the `oauth:` section of keys.yaml, or TOOLRAG_OAUTH_* variables on AWS.
type Config struct {
	// Issuer is the authorization server's issuer identifier; tokens must
	// carry exactly this iss. Its metadata (RFC 8414, else OpenID
	// discovery) names the JWKS unless JWKSURL is set.
	Issuer string `yaml:"issuer" json:"issuer"`
	// Audience is this resource's identifier (RFC 8707); a token's aud must
	// contain it. Default: Resource.
	Audience string `yaml:"audience" json:"audience"`
	// Resource is the public URL of the MCP endpoint named in the metadata
	// document; default: Audience, else derived from each request's host.
	Resource string `yaml:"resource" json:"resource"`
	// JWKSURL skips discovery of the key set's URL.
	JWKSURL string `yaml:"jwks_url" json:"jwks_url"`
	// Algorithms allowed for signatures; default every asymmetric JWS
	// algorithm. "none" and the HS* algorithms are refused.
	Algorithms []string `yaml:"algorithms" json:"algorithms"`
	// ClockSkew tolerated on exp and nbf (default 30s, at most 5m).
	ClockSkew Duration `yaml:"clock_skew" json:"clock_skew"`
	// ScopesSupported are advertised in the metadata document.
	ScopesSupported []string `yaml:"scopes_supported" json:"scopes_supported"`
	// ScopePrefix accepts tokens that carry no aud claim at all when one of
	// their scopes starts with it: Amazon Cognito access tokens have no aud,
	// and their scopes are "<resource server identifier>/<scope>".
	ScopePrefix string `yaml:"scope_prefix" json:"scope_prefix"`
	// GroupsClaim names the claim(s) holding group names, comma-separated;
	// exactly these are read. Unset: "groups" and "cognito:groups".
	GroupsClaim string `yaml:"groups_claim" json:"groups_claim"`
	// RateLimit applies to principals whose grants set none.
	RateLimit policy.RateLimit `yaml:"rate_limit" json:"rate_limit"`
	// Introspection, when set, validates opaque (non-JWT) access tokens
	// that are not API keys through RFC 7662.
	Introspection *Introspection `yaml:"introspection" json:"introspection"`
	// Grants map claims to access; a principal gets the union of every
	// grant it matches, and a valid token that matches none is refused.
	Grants []Grant `yaml:"grants" json:"grants"`
	// RefetchInterval bounds JWKS refetches caused by unknown key ids
	// (default 30s); KeysMaxAge is how long a fetched key set is used
	// before it is refreshed in the background (default 1h).
	RefetchInterval Duration `yaml:"refetch_interval" json:"refetch_interval"`
	KeysMaxAge      Duration `yaml:"keys_max_age" json:"keys_max_age"`
}

// Introspection configures RFC 7662 token introspection.
type Introspection struct {
	URL          string `yaml:"url" json:"url"`
	ClientID     string `yaml:"client_id" json:"client_id"`
	ClientSecret string `yaml:"client_secret" json:"client_secret"`
	// TokenPattern, when set, is a regular expression an opaque token of
	// the authorization server matches (e.g. "^[A-Za-z0-9_-]{40,}$"); a
	// bearer that does not is never sent to introspection. Bearers in this
	// gateway's API key format ("trg_…") never are.
	TokenPattern string `yaml:"token_pattern" json:"token_pattern"`
}

// groupsClaims lists the claims groups are read from.
func (c Config) groupsClaims() []string {
	if strings.TrimSpace(c.GroupsClaim) == "" {
		return []string{"groups", "cognito:groups"}
	}
	return list(c.GroupsClaim)
}

// Grant gives the principals matching Match access to Servers.
type Grant struct {
	Match     Match                  `yaml:"match" json:"match"`
	Servers   map[string]policy.Rule `yaml:"servers" json:"servers"`
	Admin     bool                   `yaml:"admin" json:"admin"`
	RateLimit policy.RateLimit       `yaml:"rate_limit" json:"rate_limit"`
}

// Match selects principals. Every field that is set must hold: Scope is
// one of the token's scopes, Group one of its groups, Sub its subject,
// ClientID its client (client_id, azp or cid).
type Match struct {
	Scope    string `yaml:"scope" json:"scope"`
	Group    string `yaml:"group" json:"group"`
	Sub      string `yaml:"sub" json:"sub"`
	ClientID string `yaml:"client_id" json:"client_id"`
}

func (m Match) empty() bool { return m == Match{} }

// Duration reads "30s" or a number of seconds.
type Duration time.Duration

// UnmarshalYAML implements yaml.Unmarshaler.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error { return d.parse(n.Value) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s any
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	return d.parse(fmt.Sprint(s))
}

func (d *Duration) parse(s string) error {
	s = strings.TrimSpace(s)
	if s == "" {
		*d = 0
		return nil
	}
	v, err := duration.Parse(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// defaultAlgorithms are the asymmetric JWS algorithms go-jose verifies.
var defaultAlgorithms = []string{"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}

// PrincipalPrefix starts every OAuth principal's id ("oauth:sub:<sub>" or
// "oauth:client:<client id>"); API key ids may not start with it.
const PrincipalPrefix = "oauth:"

// withDefaults validates c and fills in defaults.
func (c Config) withDefaults() (Config, error) {
	var errs []string
	bad := func(format string, a ...any) { errs = append(errs, fmt.Sprintf(format, a...)) }
	c.Issuer = strings.TrimSpace(c.Issuer)
	if c.Issuer == "" {
		bad("issuer is required")
	} else if err := checkURL(c.Issuer); err != nil {
		bad("issuer: %v", err)
	}
	if c.Audience == "" {
		c.Audience = c.Resource
	}
	if c.Audience == "" && c.ScopePrefix == "" {
		bad("audience is required (this gateway's MCP URL, e.g. https://gateway.example.com/mcp), or scope_prefix for authorization servers whose tokens carry no aud (Cognito)")
	}
	if c.Resource != "" {
		if err := checkURL(c.Resource); err != nil {
			bad("resource: %v", err)
		}
	}
	if c.JWKSURL != "" {
		if err := checkURL(c.JWKSURL); err != nil {
			bad("jwks_url: %v", err)
		}
	}
	if len(c.Algorithms) == 0 {
		c.Algorithms = defaultAlgorithms
	}
	for _, a := range c.Algorithms {
		if !slices.Contains(defaultAlgorithms, a) {
			bad("algorithms: %q is not allowed (allowed: %s; none and HS* are never accepted)", a, strings.Join(defaultAlgorithms, ", "))
		}
	}
	switch {
	case c.ClockSkew == 0:
		c.ClockSkew = Duration(30 * time.Second)
	case time.Duration(c.ClockSkew) > 5*time.Minute:
		bad("clock_skew must be at most 5m")
	}
	if c.RefetchInterval == 0 {
		c.RefetchInterval = Duration(30 * time.Second)
	}
	if c.KeysMaxAge == 0 {
		c.KeysMaxAge = Duration(time.Hour)
	}
	if c.RateLimit.Rate < 0 || c.RateLimit.Burst < 0 {
		bad("rate_limit values must not be negative")
	}
	if in := c.Introspection; in != nil {
		if in.URL != "" {
			if err := checkURL(in.URL); err != nil {
				bad("introspection.url: %v", err)
			}
		} else if c.JWKSURL != "" {
			bad("introspection.url is required with jwks_url (there is no discovery to find it)")
		}
		if in.ClientID == "" {
			bad("introspection.client_id is required")
		}
		if in.TokenPattern != "" {
			if _, err := regexp.Compile(in.TokenPattern); err != nil {
				bad("introspection.token_pattern: %v", err)
			}
		}
	}
	if len(c.Grants) == 0 {
		bad("grants: at least one grant is required (a token that matches no grant can do nothing)")
	}
	for i, g := range c.Grants {
		if g.Match.empty() {
			bad("grants[%d]: match needs at least one of scope, group, sub, client_id", i)
		}
		if len(g.Servers) == 0 && !g.Admin {
			bad("grants[%d]: servers is empty (grant at least one server)", i)
		}
		for sid := range g.Servers {
			if err := catalog.ValidServerID(sid); err != nil {
				bad("grants[%d]: servers: %v", i, err)
			}
		}
		if g.RateLimit.Rate < 0 || g.RateLimit.Burst < 0 {
			bad("grants[%d]: rate_limit values must not be negative", i)
		}
	}
	if len(errs) > 0 {
		return Config{}, fmt.Errorf("oauth: %s", strings.Join(errs, "; "))
	}
	return c, nil
}

func checkURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return fmt.Errorf("%q is not an http(s) URL", s)
	}
	if u.Scheme == "http" && !isLoopback(u.Hostname()) {
		return fmt.Errorf("%q must use https (plain http only on localhost)", s)
	}
	return nil
}

func isLoopback(host string) bool {
	return host == "localhost" || host == "::1" || strings.HasPrefix(host, "127.")
}

// ParseKeysFile reads the `oauth:` section of a keys.yaml document. It
// returns nil, nil when there is none. ${VAR} in introspection.client_secret
// is expanded through getenv.
func ParseKeysFile(name string, data []byte, getenv func(string) string) (*Config, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%s: invalid YAML: %w", name, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil
	}
	root := doc.Content[0]
	var section *yaml.Node
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "oauth" {
			section = root.Content[i+1]
		}
	}
	if section == nil || section.Tag == "!!null" {
		return nil, nil
	}
	// Re-decode the section strictly so that a misspelt field is an error.
	raw, err := yaml.Marshal(section)
	if err != nil {
		return nil, fmt.Errorf("%s: oauth: %w", name, err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	dec.KnownFields(true)
	var c Config
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("%s:%d: oauth: %w", name, section.Line, err)
	}
	if in := c.Introspection; in != nil && strings.Contains(in.ClientSecret, "${") {
		if in.ClientSecret, err = config.ExpandVars(context.Background(), in.ClientSecret, config.EnvSecrets(getenv)); err != nil {
			return nil, fmt.Errorf("%s: oauth.introspection.client_secret: %w", name, err)
		}
	}
	if c, err = c.withDefaults(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, section.Line, err)
	}
	return &c, nil
}

// LoadKeysFile reads the `oauth:` section of the keys file at path.
func LoadKeysFile(path string, getenv func(string) string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read keys: %w", err)
	}
	return ParseKeysFile(path, data, getenv)
}

// Environment variables read by FromEnv (the AWS functions' configuration).
var EnvVars = []struct{ Name, Help string }{
	{"TOOLRAG_OAUTH_ISSUER", "authorization server issuer URL; setting it turns OAuth on"},
	{"TOOLRAG_OAUTH_AUDIENCE", "this resource's identifier (RFC 8707), required in a token's aud"},
	{"TOOLRAG_OAUTH_RESOURCE", "public MCP URL named in the metadata (default: the audience, else the request's host)"},
	{"TOOLRAG_OAUTH_JWKS_URL", "JWKS URL (default: from the issuer's metadata)"},
	{"TOOLRAG_OAUTH_ALGORITHMS", "comma-separated allowed JWS algorithms (default: every asymmetric one)"},
	{"TOOLRAG_OAUTH_SCOPES", "comma-separated scopes advertised in the metadata"},
	{"TOOLRAG_OAUTH_SCOPE_PREFIX", "accept aud-less tokens with a scope under this prefix (Cognito: <resource server>/)"},
	{"TOOLRAG_OAUTH_CLOCK_SKEW", "tolerated clock skew on exp/nbf (default 30s)"},
	{"TOOLRAG_OAUTH_GROUPS_CLAIM", "claim(s) holding group names, comma-separated; exactly these are read (default: groups and cognito:groups)"},
	{"TOOLRAG_OAUTH_GRANTS", `grants as JSON: [{"match":{"scope":"..."},"servers":{"echo":{}},"admin":false}]`},
	{"TOOLRAG_OAUTH_INTROSPECTION_URL", "RFC 7662 introspection endpoint for opaque tokens (optional)"},
	{"TOOLRAG_OAUTH_INTROSPECTION_CLIENT_ID", "client id for introspection"},
	{"TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET", "client secret for introspection"},
	{"TOOLRAG_OAUTH_INTROSPECTION_TOKEN_PATTERN", "regular expression opaque tokens match; other bearers are never sent to introspection"},
}

// FromEnv reads the configuration from TOOLRAG_OAUTH_* variables. It
// returns nil, nil when TOOLRAG_OAUTH_ISSUER is unset.
func FromEnv(getenv func(string) string) (*Config, error) {
	get := func(k string) string { return strings.TrimSpace(getenv(k)) }
	if get("TOOLRAG_OAUTH_ISSUER") == "" {
		return nil, nil
	}
	c := Config{
		Issuer:          get("TOOLRAG_OAUTH_ISSUER"),
		Audience:        get("TOOLRAG_OAUTH_AUDIENCE"),
		Resource:        get("TOOLRAG_OAUTH_RESOURCE"),
		JWKSURL:         get("TOOLRAG_OAUTH_JWKS_URL"),
		Algorithms:      list(get("TOOLRAG_OAUTH_ALGORITHMS")),
		ScopesSupported: list(get("TOOLRAG_OAUTH_SCOPES")),
		ScopePrefix:     get("TOOLRAG_OAUTH_SCOPE_PREFIX"),
		GroupsClaim:     get("TOOLRAG_OAUTH_GROUPS_CLAIM"),
	}
	if err := c.ClockSkew.parse(get("TOOLRAG_OAUTH_CLOCK_SKEW")); err != nil {
		return nil, fmt.Errorf("TOOLRAG_OAUTH_CLOCK_SKEW: %w", err)
	}
	if g := get("TOOLRAG_OAUTH_GRANTS"); g != "" {
		dec := json.NewDecoder(strings.NewReader(g))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&c.Grants); err != nil {
			return nil, fmt.Errorf("TOOLRAG_OAUTH_GRANTS must be a JSON list of grants: %w", err)
		}
	}
	if u := get("TOOLRAG_OAUTH_INTROSPECTION_URL"); u != "" {
		c.Introspection = &Introspection{URL: u, ClientID: get("TOOLRAG_OAUTH_INTROSPECTION_CLIENT_ID"),
			ClientSecret: getenv("TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET"), TokenPattern: get("TOOLRAG_OAUTH_INTROSPECTION_TOKEN_PATTERN")}
	}
	c, err := c.withDefaults()
	if err != nil {
		return nil, fmt.Errorf("%w (TOOLRAG_OAUTH_* variables)", err)
	}
	return &c, nil
}

func list(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// CheckKeyIDs refuses API key ids that could be mistaken for an OAuth
// principal's id.
func CheckKeyIDs(keys []policy.Key) error {
	for _, k := range keys {
		if strings.HasPrefix(k.ID, PrincipalPrefix) {
			return fmt.Errorf("API key id %q starts with %q, which names OAuth principals; rename the key", k.ID, PrincipalPrefix)
		}
	}
	return nil
}
