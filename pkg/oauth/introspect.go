package oauth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// IntrospectToken implements auth.OpaqueTokenValidator: a bearer that is
// neither a JWT of the issuer nor an API key is sent to the introspection
// endpoint (RFC 7662), when one is configured. Results are cached by the
// token's SHA-256 for at most a minute (and never past the token's exp).
func (v *Validator) IntrospectToken(ctx context.Context, token string) (policy.Key, error) {
	if !v.introspectable(token) {
		return policy.Key{}, auth.ErrNotAccessToken
	}
	sum := sha256.Sum256([]byte(token))
	if e, ok := v.intro.get(sum, v.now()); ok {
		return e.key, e.err
	}
	if _, err := v.setup(ctx); err != nil {
		return policy.Key{}, err
	}
	if v.introURL == "" {
		return policy.Key{}, fmt.Errorf("%w: the authorization server's metadata names no introspection_endpoint; set oauth.introspection.url", auth.ErrTokenCheckUnavailable)
	}
	if until := v.introDown.Load(); until != 0 && v.now().UnixNano() < until {
		// The endpoint failed a moment ago: do not send it every bearer
		// (with the gateway's client secret) while it is down.
		return policy.Key{}, fmt.Errorf("%w: the introspection endpoint failed moments ago; retry shortly", auth.ErrTokenCheckUnavailable)
	}
	c, err := v.introspect(ctx, token)
	if err != nil {
		v.introDown.Store(v.now().Add(introBackoff).UnixNano())
		return policy.Key{}, err // transient: not cached
	}
	ttl := time.Minute
	var key policy.Key
	switch {
	case c.Active == nil || !*c.Active:
		err = fmt.Errorf("%w: the authorization server reports the token inactive (expired, revoked or unknown)", auth.ErrInvalidToken)
		ttl = 10 * time.Second
	case c.Issuer != "" && c.Issuer != v.cfg.Issuer:
		err = fmt.Errorf("%w: the token was issued by %q, not %q", auth.ErrInvalidToken, c.Issuer, v.cfg.Issuer)
	default:
		if c.Expiry.set() {
			exp, perr := c.Expiry.Float64()
			if perr != nil {
				err = fmt.Errorf("%w: exp is not a number", auth.ErrInvalidToken)
				break
			}
			t := time.Unix(int64(exp), 0)
			if t.Add(time.Duration(v.cfg.ClockSkew)).Before(v.now()) {
				err = fmt.Errorf("%w: the access token expired at %s", auth.ErrInvalidToken, t.UTC().Format(time.RFC3339))
				break
			}
			ttl = min(ttl, t.Sub(v.now()))
		}
		key, err = v.admit(c)
	}
	v.intro.put(sum, introEntry{key: key, err: err, until: v.now().Add(ttl)})
	return key, err
}

// introBackoff is how long the introspection endpoint is left alone after
// it failed.
const introBackoff = 2 * time.Second

// introspectable reports whether a bearer may be sent to the introspection
// endpoint: introspection is configured, the bearer is not in this
// gateway's API key format (a mistyped key is no access token, and sending
// it would hand it to the authorization server), it matches the
// configured token pattern, and it is of a sane size.
func (v *Validator) introspectable(token string) bool {
	switch {
	case v.cfg.Introspection == nil, len(token) > maxOpaqueToken, strings.HasPrefix(token, policy.SecretPrefix):
		return false
	case v.tokenRE != nil:
		return v.tokenRE.MatchString(token)
	}
	return true
}

// maxOpaqueToken bounds the bearers sent to introspection.
const maxOpaqueToken = 4096

func (v *Validator) introspect(ctx context.Context, token string) (claims, error) {
	form := url.Values{"token": {token}, "token_type_hint": {"access_token"}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.introURL, strings.NewReader(form.Encode()))
	if err != nil {
		return claims{}, fmt.Errorf("%w: %v", auth.ErrTokenCheckUnavailable, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	req.SetBasicAuth(url.QueryEscape(v.cfg.Introspection.ClientID), url.QueryEscape(v.cfg.Introspection.ClientSecret))
	resp, err := v.client.Do(req)
	if err != nil {
		return claims{}, fmt.Errorf("%w: introspection: %v", auth.ErrTokenCheckUnavailable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes))
	if err != nil || resp.StatusCode != http.StatusOK {
		return claims{}, fmt.Errorf("%w: introspection endpoint answered HTTP %d", auth.ErrTokenCheckUnavailable, resp.StatusCode)
	}
	var c claims
	if err := json.Unmarshal(body, &c); err != nil {
		return claims{}, fmt.Errorf("%w: introspection answer is not JSON: %v", auth.ErrTokenCheckUnavailable, err)
	}
	if v.cfg.GroupsClaim != "" {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			return claims{}, fmt.Errorf("%w: introspection answer is not a JSON object", auth.ErrTokenCheckUnavailable)
		}
		if c.Groups, err = v.groupsFrom(m); err != nil {
			return claims{}, err
		}
		c.CognitoGroups = nil
	}
	return c, nil
}

type introEntry struct {
	key   policy.Key
	err   error
	until time.Time
}

type introCache struct {
	mu sync.Mutex
	m  map[[32]byte]introEntry
}

func newIntroCache() *introCache { return &introCache{m: map[[32]byte]introEntry{}} }

func (c *introCache) get(k [32]byte, now time.Time) (introEntry, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[k]
	if !ok || !now.Before(e.until) {
		return introEntry{}, false
	}
	return e, true
}

func (c *introCache) put(k [32]byte, e introEntry) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 10000 {
		c.m = map[[32]byte]introEntry{}
	}
	c.m[k] = e
}
