package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Options are the validator's collaborators.
type Options struct {
	// HTTPClient fetches metadata, keys and introspection results
	// (default: a client with a 10s timeout).
	HTTPClient *http.Client
	// Now is the clock (tests).
	Now    func() time.Time
	Logger *slog.Logger
}

// Validator validates access tokens and maps them to policies. It
// implements auth.TokenValidator and auth.OpaqueTokenValidator. Build one
// per process and keep it: it caches the issuer's metadata and keys.
type Validator struct {
	cfg    Config
	client *http.Client
	now    func() time.Time
	log    *slog.Logger
	algs   []jose.SignatureAlgorithm
	oidc   oidc.Config

	setupMu   sync.Mutex
	setupDone bool
	setupAt   time.Time
	setupErr  error
	keys      *keySet
	introURL  string

	intro     *introCache
	verified  *introCache    // tokens verified before, by SHA-256
	tokenRE   *regexp.Regexp // Introspection.TokenPattern
	introDown atomic.Int64   // unix ns until which introspection is not tried
}

// New checks cfg and returns a validator. It makes no network call; the
// issuer's metadata and keys are fetched by Prefetch or on first use.
func New(cfg Config, o Options) (*Validator, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	v := &Validator{cfg: cfg, client: o.HTTPClient, now: o.Now, log: o.Logger, intro: newIntroCache(), verified: newIntroCache()}
	if v.client == nil {
		v.client = &http.Client{Timeout: 10 * time.Second}
	}
	if v.now == nil {
		v.now = time.Now
	}
	if v.log == nil {
		v.log = slog.Default()
	}
	for _, a := range cfg.Algorithms {
		v.algs = append(v.algs, jose.SignatureAlgorithm(a))
	}
	skew := time.Duration(cfg.ClockSkew)
	v.oidc = oidc.Config{
		SkipClientIDCheck:    true, // aud is checked against this resource below (RFC 8707)
		SupportedSigningAlgs: cfg.Algorithms,
		// go-oidc refuses tokens whose exp is before Now: moving its clock
		// back by the skew tolerates that much skew on exp.
		Now: func() time.Time { return v.now().Add(-skew) },
	}
	if in := cfg.Introspection; in != nil {
		v.introURL = in.URL
		if in.TokenPattern != "" {
			v.tokenRE = regexp.MustCompile(in.TokenPattern) // checked by withDefaults
		}
	}
	return v, nil
}

// Config returns the validated configuration (defaults filled in).
func (v *Validator) Config() Config { return v.cfg }

// Prefetch discovers the issuer's metadata and fetches its keys, so the
// first request does not wait for them.
func (v *Validator) Prefetch(ctx context.Context) error {
	ks, err := v.setup(ctx)
	if err != nil {
		return err
	}
	_, err = ks.current(ctx)
	return err
}

// JWKSFetches counts the key set fetches so far (metrics and tests).
func (v *Validator) JWKSFetches() int64 {
	v.setupMu.Lock()
	ks := v.keys
	v.setupMu.Unlock()
	if ks == nil {
		return 0
	}
	return ks.fetches.Load()
}

// setup runs discovery once (retried at most every RefetchInterval when
// it failed) and returns the key set.
func (v *Validator) setup(ctx context.Context) (*keySet, error) {
	v.setupMu.Lock()
	defer v.setupMu.Unlock()
	if v.setupDone {
		return v.keys, nil
	}
	if !v.setupAt.IsZero() && v.now().Sub(v.setupAt) < time.Duration(v.cfg.RefetchInterval) {
		return nil, v.setupErr
	}
	v.setupAt = v.now()
	jwksURL, introURL := v.cfg.JWKSURL, v.introURL
	if jwksURL == "" {
		md, err := discover(ctx, v.client, v.cfg.Issuer)
		if err != nil {
			v.setupErr = fmt.Errorf("%w: %v", auth.ErrTokenCheckUnavailable, err)
			v.log.Warn("oauth: authorization server discovery failed", "issuer", v.cfg.Issuer, "error", err)
			return nil, v.setupErr
		}
		jwksURL = md.JWKSURI
		if introURL == "" && v.cfg.Introspection != nil {
			introURL = md.IntrospectionEndpoint
		}
	}
	v.keys = &keySet{url: jwksURL, client: v.client, algs: v.algs, now: v.now,
		refetchInterval: time.Duration(v.cfg.RefetchInterval), maxAge: time.Duration(v.cfg.KeysMaxAge)}
	v.introURL = introURL
	v.setupDone = true
	return v.keys, nil
}

// claims are the access token claims the gateway reads (RFC 9068, plus
// the usual vendor spellings).
type claims struct {
	Issuer        string     `json:"iss"`
	Subject       string     `json:"sub"`
	Audience      stringList `json:"aud"`
	NotBefore     numeric    `json:"nbf"`
	Expiry        numeric    `json:"exp"`
	Scope         string     `json:"scope"`
	Scp           stringList `json:"scp"`
	ClientID      string     `json:"client_id"`
	Azp           string     `json:"azp"`
	Cid           string     `json:"cid"`
	TokenUse      string     `json:"token_use"`
	Active        *bool      `json:"active"` // introspection
	Groups        stringList `json:"groups"`
	CognitoGroups stringList `json:"cognito:groups"`
}

// stringList reads a JSON string or list of strings.
type stringList []string

func (s *stringList) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var one string
		if err := json.Unmarshal(b, &one); err != nil {
			return err
		}
		*s = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*s = many
	return nil
}

// Principal is the caller an access token names.
type Principal struct {
	Subject  string
	ClientID string
	Scopes   []string
	Groups   []string
}

// ID is the principal's canonical id: "oauth:sub:<sub>" for a token with a
// subject, "oauth:client:<client id>" for one without (a client acting for
// itself), so that a subject and a client that happen to share a name are
// never the same principal. It is the policy's KeyID: rate limits, audit
// lines and session ownership use it.
func (p Principal) ID() string {
	if p.Subject != "" {
		return PrincipalPrefix + "sub:" + p.Subject
	}
	return PrincipalPrefix + "client:" + p.ClientID
}

// peekIssuer reports the iss claim of a compact JWS without verifying
// anything; ok is false when s is not shaped like a JWT.
func peekIssuer(s string) (iss string, ok bool) {
	if len(s) > 16<<10 || strings.Count(s, ".") != 2 {
		return "", false
	}
	parts := strings.SplitN(s, ".", 3)
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return "", false
	}
	var c struct {
		Iss string `json:"iss"`
	}
	if json.Unmarshal(payload, &c) != nil {
		return "", false
	}
	return c.Iss, true
}

// ValidateToken implements auth.TokenValidator.
func (v *Validator) ValidateToken(ctx context.Context, token string) (policy.Key, error) {
	iss, ok := peekIssuer(token)
	if !ok {
		return policy.Key{}, auth.ErrNotAccessToken
	}
	if iss != v.cfg.Issuer {
		if len(iss) > 200 {
			iss = iss[:200] + "…"
		}
		return policy.Key{}, fmt.Errorf("%w: the bearer is a JWT issued by %q; this gateway accepts access tokens from %q", auth.ErrNotAccessToken, iss, v.cfg.Issuer)
	}
	// A token verified before is not verified again until it expires (at
	// most verifiedTTL): agents send the same token with every request.
	sum := sha256.Sum256([]byte(token))
	if e, ok := v.verified.get(sum, v.now()); ok {
		return e.key, nil
	}
	ks, err := v.setup(ctx)
	if err != nil {
		return policy.Key{}, err
	}
	call := &callKeySet{ks: ks}
	tok, err := oidc.NewVerifier(v.cfg.Issuer, call, &v.oidc).Verify(ctx, token)
	if err != nil {
		var expired *oidc.TokenExpiredError
		switch {
		case call.err != nil:
			return policy.Key{}, call.err
		case errors.As(err, &expired):
			return policy.Key{}, fmt.Errorf("%w: the access token expired at %s; get a new one", auth.ErrInvalidToken, expired.Expiry.UTC().Format(time.RFC3339))
		default:
			return policy.Key{}, fmt.Errorf("%w: %s", auth.ErrInvalidToken, strings.TrimPrefix(err.Error(), "oidc: "))
		}
	}
	var c claims
	if err := tok.Claims(&c); err != nil {
		return policy.Key{}, fmt.Errorf("%w: unreadable claims: %v", auth.ErrInvalidToken, err)
	}
	if v.cfg.GroupsClaim != "" {
		var m map[string]json.RawMessage
		if err := tok.Claims(&m); err != nil {
			return policy.Key{}, fmt.Errorf("%w: unreadable claims: %v", auth.ErrInvalidToken, err)
		}
		if c.Groups, err = v.groupsFrom(m); err != nil {
			return policy.Key{}, err
		}
		c.CognitoGroups = nil
	}
	key, err := v.admit(c)
	if err == nil {
		until := tok.Expiry.Add(time.Duration(v.cfg.ClockSkew))
		if limit := v.now().Add(verifiedTTL); limit.Before(until) {
			until = limit
		}
		v.verified.put(sum, introEntry{key: key, until: until})
	}
	return key, err
}

// groupsFrom reads the groups of a token from exactly the claims named in
// groups_claim (comma-separated), and from no other claim: a token that
// carries "groups" when the operator named "roles" gets no group from it.
func (v *Validator) groupsFrom(m map[string]json.RawMessage) ([]string, error) {
	var out []string
	for _, name := range v.cfg.groupsClaims() {
		raw, ok := m[name]
		if !ok || string(raw) == "null" {
			continue
		}
		var g stringList
		if err := json.Unmarshal(raw, &g); err != nil {
			return nil, fmt.Errorf("%w: claim %q must be a string or a list of strings", auth.ErrInvalidToken, name)
		}
		out = append(out, g...)
	}
	return out, nil
}

// SignedToken implements auth.SignedTokenChecker: a bearer shaped like a
// JWT of the configured issuer is checked by its signature, so it cannot
// be guessed.
func (v *Validator) SignedToken(token string) bool {
	iss, ok := peekIssuer(token)
	return ok && iss == v.cfg.Issuer
}

// verifiedTTL bounds how long a verified token is trusted without
// checking its signature again (a key the authorization server withdrew
// stops being honoured within it).
const verifiedTTL = 5 * time.Minute

// callKeySet keeps the key set's own error for one verification: go-oidc
// flattens it into text, and "keys unreachable" must stay a 503.
type callKeySet struct {
	ks  *keySet
	err error
}

func (c *callKeySet) VerifySignature(ctx context.Context, raw string) ([]byte, error) {
	p, err := c.ks.VerifySignature(ctx, raw)
	c.err = err
	return p, err
}

// admit checks the claims go-oidc leaves to the resource server (audience,
// nbf, token type) and maps them to a grant.
func (v *Validator) admit(c claims) (policy.Key, error) {
	now := v.now()
	skew := time.Duration(v.cfg.ClockSkew)
	if c.TokenUse != "" && c.TokenUse != "access" {
		return policy.Key{}, fmt.Errorf("%w: this is an ID token (token_use %q), send the access token", auth.ErrInvalidToken, c.TokenUse)
	}
	if err := numericDate("exp", c.Expiry); err != nil {
		return policy.Key{}, err
	}
	if err := numericDate("nbf", c.NotBefore); err != nil {
		return policy.Key{}, err
	}
	if c.NotBefore.set() {
		nbf, err := c.NotBefore.Float64()
		if err != nil {
			return policy.Key{}, fmt.Errorf("%w: nbf is not a number", auth.ErrInvalidToken)
		}
		if t := time.Unix(int64(nbf), 0); t.After(now.Add(skew)) {
			return policy.Key{}, fmt.Errorf("%w: the access token is not valid before %s", auth.ErrInvalidToken, t.UTC().Format(time.RFC3339))
		}
	}
	p := Principal{Subject: c.Subject, ClientID: firstOf(c.ClientID, c.Azp, c.Cid)}
	p.Scopes = strings.Fields(c.Scope)
	p.Scopes = append(p.Scopes, c.Scp...)
	p.Groups = append(append(p.Groups, c.Groups...), c.CognitoGroups...)
	switch {
	case len(c.Audience) > 0:
		if v.cfg.Audience == "" || !slices.Contains(c.Audience, v.cfg.Audience) {
			return policy.Key{}, fmt.Errorf("%w: the access token is for %s, not for this resource (%s); request it with resource=%s", auth.ErrInvalidToken, strings.Join(c.Audience, ", "), v.cfg.Audience, v.cfg.Audience)
		}
	case v.cfg.ScopePrefix != "" && slices.ContainsFunc(p.Scopes, func(s string) bool { return strings.HasPrefix(s, v.cfg.ScopePrefix) }):
		// Cognito-style: no aud, scopes of this resource server.
	default:
		return policy.Key{}, fmt.Errorf("%w: the access token has no audience; request it with resource=%s", auth.ErrInvalidToken, v.cfg.Audience)
	}
	if p.Subject == "" && p.ClientID == "" {
		return policy.Key{}, fmt.Errorf("%w: the access token names no subject (sub) or client (client_id)", auth.ErrInvalidToken)
	}
	return v.grant(p)
}

// numeric is a time claim as the token spelled it: RFC 7519 §2 wants a
// NumericDate, a JSON number; "exp": "1999999999" is not one.
type numeric struct {
	raw   string // "" when absent or null
	value float64
}

func (n *numeric) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*n = numeric{}
		return nil
	}
	n.raw = string(b)
	if f, err := strconv.ParseFloat(n.raw, 64); err == nil && b[0] != '"' {
		n.value = f
	}
	return nil
}

func (n numeric) set() bool { return n.raw != "" }

// Float64 returns the number, or an error when the claim is not a JSON
// number.
func (n numeric) Float64() (float64, error) {
	if _, err := strconv.ParseFloat(n.raw, 64); err != nil || n.raw[0] == '"' {
		return 0, errors.New("not a number")
	}
	return n.value, nil
}

// numericDate refuses a time claim that is present but not a JSON number.
func numericDate(name string, n numeric) error {
	if !n.set() {
		return nil
	}
	if _, err := n.Float64(); err != nil {
		return fmt.Errorf("%w: %s must be a number (RFC 7519 NumericDate)", auth.ErrInvalidToken, name)
	}
	return nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

func (m Match) matches(p Principal) bool {
	return (m.Scope == "" || slices.Contains(p.Scopes, m.Scope)) &&
		(m.Group == "" || slices.Contains(p.Groups, m.Group)) &&
		(m.Sub == "" || m.Sub == p.Subject) &&
		(m.ClientID == "" || m.ClientID == p.ClientID)
}

// grant is the union of the grants p matches, as the policy.Key an API key
// with the same servers would be.
func (v *Validator) grant(p Principal) (policy.Key, error) {
	key := policy.Key{ID: p.ID(), Servers: map[string]policy.Rule{}}
	matched := false
	for _, g := range v.cfg.Grants {
		if !g.Match.matches(p) {
			continue
		}
		matched = true
		key.Admin = key.Admin || g.Admin
		if key.RateLimit.Rate == 0 {
			key.RateLimit = g.RateLimit
		}
		for sid, r := range g.Servers {
			if old, ok := key.Servers[sid]; ok {
				r = unionRule(old, r)
			}
			key.Servers[sid] = r
		}
	}
	if !matched {
		return policy.Key{}, fmt.Errorf("%w: the token is valid but no grant of this gateway matches %s (scopes %q); ask its operator for a grant", auth.ErrInsufficientScope, p.ID(), strings.Join(p.Scopes, " "))
	}
	if key.RateLimit.Rate == 0 {
		key.RateLimit = v.cfg.RateLimit
	}
	return key, nil
}

// unionRule is what two rules on one server grant together (policy.Rule
// semantics): a rule that names no list is the whole server; otherwise
// each kind's lists add up, and "*" in either grants all of that kind.
func unionRule(a, b policy.Rule) policy.Rule {
	if a.Whole() || b.Whole() {
		return policy.Rule{}
	}
	u := func(x, y []string) []string {
		if x == nil && y == nil {
			return nil
		}
		if slices.Contains(x, policy.Wildcard) || slices.Contains(y, policy.Wildcard) {
			return []string{policy.Wildcard}
		}
		out := append(make([]string, 0, len(x)+len(y)), x...)
		for _, s := range y {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
		return out
	}
	return policy.Rule{ToolPrefixes: u(a.ToolPrefixes, b.ToolPrefixes), URIPrefixes: u(a.URIPrefixes, b.URIPrefixes),
		PromptPrefixes: u(a.PromptPrefixes, b.PromptPrefixes)}
}
