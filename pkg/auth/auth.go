// Package auth authenticates HTTP requests by Bearer API key, attaches the
// key's access policy to the request context, and enforces per-key rate
// limits. Secrets are only ever handled as SHA-256 hashes after the header
// is read, and never appear in logs, metrics or error messages.
package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// ErrUnknownKey is returned by a KeyLookup for a hash no key has.
var ErrUnknownKey = errors.New("unknown API key")

// ErrDisabledKey is returned for a revoked key.
var ErrDisabledKey = errors.New("API key is revoked")

// ErrExpiredKey is returned for a key past its expires_at.
var ErrExpiredKey = errors.New("API key has expired")

// KeyLookup finds the key whose secret hashes to secretHash
// ("sha256:<hex>"). It returns ErrUnknownKey (or an error wrapping it) when
// there is none.
type KeyLookup interface {
	LookupKey(ctx context.Context, secretHash string) (policy.Key, error)
}

// StaticKeys is a KeyLookup over a fixed list (keys.yaml).
type StaticKeys struct{ byHash map[string]policy.Key }

// NewStaticKeys indexes keys by their secret hash.
func NewStaticKeys(keys []policy.Key) *StaticKeys {
	m := make(map[string]policy.Key, len(keys))
	for _, k := range keys {
		m[k.SecretHash] = k
	}
	return &StaticKeys{byHash: m}
}

// LookupKey implements KeyLookup.
func (s *StaticKeys) LookupKey(_ context.Context, secretHash string) (policy.Key, error) {
	k, ok := s.byHash[secretHash]
	if !ok {
		return policy.Key{}, ErrUnknownKey
	}
	return k, nil
}

// Cached wraps a KeyLookup (e.g. DynamoDB) with a short TTL cache, so a key
// revoked in the store stops working within ttl. Unknown keys are cached
// too (negative caching) to absorb brute-force traffic.
type Cached struct {
	next KeyLookup
	ttl  time.Duration
	now  func() time.Time
	mu   sync.Mutex
	m    map[string]cachedKey
}

type cachedKey struct {
	key     policy.Key
	err     error
	expires time.Time
}

// NewCached returns a caching KeyLookup.
func NewCached(next KeyLookup, ttl time.Duration) *Cached {
	return &Cached{next: next, ttl: ttl, now: time.Now, m: map[string]cachedKey{}}
}

// LookupKey implements KeyLookup.
func (c *Cached) LookupKey(ctx context.Context, secretHash string) (policy.Key, error) {
	now := c.now()
	c.mu.Lock()
	e, ok := c.m[secretHash]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.key, e.err
	}
	k, err := c.next.LookupKey(ctx, secretHash)
	if err != nil && !errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrDisabledKey) {
		return k, err // transient store errors are not cached
	}
	c.mu.Lock()
	if len(c.m) > 100000 {
		c.m = map[string]cachedKey{}
	}
	c.m[secretHash] = cachedKey{key: k, err: err, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return k, err
}

// Bounded returns a KeyLookup that bounds each lookup of next by timeout
// and tells onError (when set) about every failure of the store itself (an
// unknown or disabled key is not one): the middleware answers those 503
// with Retry-After.
func Bounded(next KeyLookup, timeout time.Duration, onError func(error)) KeyLookup {
	return bounded{next, timeout, onError}
}

type bounded struct {
	next    KeyLookup
	timeout time.Duration
	onError func(error)
}

func (b bounded) LookupKey(ctx context.Context, secretHash string) (policy.Key, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	k, err := b.next.LookupKey(ctx, secretHash)
	if err != nil && b.onError != nil && !errors.Is(err, ErrUnknownKey) && !errors.Is(err, ErrDisabledKey) {
		b.onError(err)
	}
	return k, err
}

// Counters are the middleware's metrics. Middlewares built with the same
// Counters also share one set of rate-limit buckets, so a key's rate_limit
// covers every route it is used on (MCP and REST alike).
type Counters struct {
	Authenticated atomic.Int64
	Failures      atomic.Int64 // missing, malformed, unknown, revoked or expired key
	RateLimited   atomic.Int64
	LookupErrors  atomic.Int64 // key store unavailable
	// FailureThrottled counts requests refused because their client
	// address failed authentication too often (FailureLimit).
	FailureThrottled atomic.Int64

	limitOnce sync.Once
	limits    *limiters
	guard     *failureGuard // per client address and credential
}

func (c *Counters) limiter() *limiters {
	c.limitOnce.Do(func() { c.limits, c.guard = newLimiters(), newFailureGuard() })
	return c.limits
}

// Config configures the middleware.
type Config struct {
	Keys KeyLookup
	// Disabled skips authentication and grants every server
	// (TOOL_RAG_WITHOUT_AUTH=1); use only on a trusted network.
	Disabled bool
	// DefaultRate applies to keys without their own rate_limit; zero means
	// unlimited.
	DefaultRate policy.RateLimit
	Counters    *Counters
	// Realm is reported in WWW-Authenticate.
	Realm string
	// FailureLimit bounds failed authentications per client address
	// (ClientAddr): after Burst distinct failing credentials, at most Rate
	// per second. Beyond it a credential that has not authenticated
	// recently is answered 429 with Retry-After before it is looked up,
	// so keys cannot be guessed faster; a credential that works, a signed
	// access token and a request without credentials are never refused
	// by it (see failureGuard). Zero means no limit.
	FailureLimit policy.RateLimit
	// TrustForwardedFor takes the client address from the last
	// X-Forwarded-For entry (see ClientAddr); set it only behind a reverse
	// proxy that appends it.
	TrustForwardedFor bool
	// Tokens, when set, validates OAuth access tokens (pkg/oauth) before
	// the API key lookup.
	Tokens TokenValidator
	// Challenge names the resource metadata in every 401 (RFC 9728) and
	// words its messages. Challenger, when set, is asked for it on every
	// request instead (a configuration that is reloaded).
	Challenge  Challenge
	Challenger interface{ Challenge() Challenge }
	// OnRateLimited, when set, is told the key id of every request refused
	// by its rate limit (usage statistics). It must not block.
	OnRateLimited func(keyID string)
	// Live, when set, tracks every authenticated request so that revoking
	// its credential ends it (Live.Recheck).
	Live *Live
}

func (cfg Config) challenge() Challenge {
	if cfg.Challenger != nil {
		return cfg.Challenger.Challenge()
	}
	return cfg.Challenge
}

// Middleware authenticates every request before next.
func Middleware(cfg Config, next http.Handler) http.Handler {
	if cfg.Counters == nil {
		cfg.Counters = &Counters{}
	}
	if cfg.Realm == "" {
		cfg.Realm = "mcp-gateway"
	}
	limiter := cfg.Counters.limiter()
	guard := cfg.Counters.guard
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cfg.Disabled {
			next.ServeHTTP(w, r.WithContext(WithPrincipal(policy.NewContext(r.Context(), policy.Unrestricted()), AnonymousPrincipal)))
			return
		}
		ch := cfg.challenge()
		secret, ok := Bearer(r.Header.Get("Authorization"))
		if !ok {
			// Nothing was guessed: not counted against the address.
			cfg.Counters.Failures.Add(1)
			unauthorized(w, ch.header(r, cfg.Realm, "", ""), orDefault(ch.NoCredentials, "missing or malformed Authorization header: use \"Authorization: Bearer <key>\""))
			return
		}
		client := ClientAddr(r, cfg.TrustForwardedFor)
		sum := sha256.Sum256([]byte(secret))
		signed := false
		if sc, ok := cfg.Tokens.(SignedTokenChecker); ok {
			signed = sc.SignedToken(secret)
		}
		if wait := guard.wait(client, sum, signed, cfg.FailureLimit, time.Now()); wait > 0 {
			cfg.Counters.FailureThrottled.Add(1)
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			writeError(w, http.StatusTooManyRequests, "too many failed authentication attempts from this address with credentials that never worked; retry later")
			return
		}
		failed := func() { guard.failed(client, sum, cfg.FailureLimit, time.Now()) }
		key, recheck, err := cfg.authenticate(r.Context(), secret)
		if err != nil {
			cfg.answerFailure(w, r, ch, err, signed, failed)
			return
		}
		guard.succeeded(sum, time.Now())
		rl := key.RateLimit
		if rl.Rate == 0 {
			rl = cfg.DefaultRate
		}
		if wait, ok := limiter.allow(key.ID, rl, time.Now()); !ok {
			cfg.Counters.RateLimited.Add(1)
			if cfg.OnRateLimited != nil {
				cfg.OnRateLimited(key.ID)
			}
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(wait.Seconds()))))
			writeError(w, http.StatusTooManyRequests, fmt.Sprintf("rate limit exceeded for key %q (%.3g requests/s, burst %d)", key.ID, rl.Rate, rl.Burst))
			return
		}
		cfg.Counters.Authenticated.Add(1)
		principal := KeyPrincipal(key)
		ctx := WithPrincipal(policy.NewContext(r.Context(), policy.For(key)), principal)
		if cfg.Live != nil {
			var done func()
			ctx, done = cfg.Live.track(ctx, principal, key, recheck)
			defer done()
		}
		next.ServeHTTP(w, r.WithContext(withTokens(ctx, limiter, key.ID, rl)))
	})
}

// SignedTokenChecker is implemented by token validators that can tell,
// without a network call, that a bearer is a signed token of their issuer:
// its signature is checked, so it cannot be guessed, and the failure
// limiter does not hold it back.
type SignedTokenChecker interface {
	SignedToken(token string) bool
}

// authenticate checks a bearer: an access token (when Tokens is set), else
// an API key, else an opaque token through introspection. It returns the
// grant and a function that checks the same credential again (Live).
func (cfg Config) authenticate(ctx context.Context, secret string) (policy.Key, func(context.Context) (policy.Key, error), error) {
	if cfg.Tokens != nil {
		key, err := cfg.Tokens.ValidateToken(ctx, secret)
		if err == nil {
			return key, func(ctx context.Context) (policy.Key, error) { return cfg.Tokens.ValidateToken(ctx, secret) }, nil
		}
		if !errors.Is(err, ErrNotAccessToken) {
			return policy.Key{}, nil, err
		}
		notToken := err
		key, recheck, err := cfg.lookupKey(ctx, policy.HashSecret(secret))
		if opaque, ok := cfg.Tokens.(OpaqueTokenValidator); ok && errors.Is(err, ErrUnknownKey) {
			key, err = opaque.IntrospectToken(ctx, secret)
			if err == nil {
				return key, func(ctx context.Context) (policy.Key, error) { return opaque.IntrospectToken(ctx, secret) }, nil
			}
			if !errors.Is(err, ErrNotAccessToken) {
				return policy.Key{}, nil, err
			}
			err = ErrUnknownKey
		}
		if errors.Is(err, ErrUnknownKey) && notToken.Error() != ErrNotAccessToken.Error() {
			err = unknownWithHint{notToken.Error()}
		}
		return key, recheck, err
	}
	return cfg.lookupKey(ctx, policy.HashSecret(secret))
}

// lookupKey finds the API key whose secret hashes to hash and checks it is
// enabled and not expired.
func (cfg Config) lookupKey(ctx context.Context, hash string) (policy.Key, func(context.Context) (policy.Key, error), error) {
	check := func(ctx context.Context) (policy.Key, error) {
		key, err := cfg.Keys.LookupKey(ctx, hash)
		switch {
		case err != nil:
			return policy.Key{}, err
		case key.Disabled:
			return policy.Key{}, ErrDisabledKey
		case subtle.ConstantTimeCompare([]byte(key.SecretHash), []byte(hash)) != 1:
			return policy.Key{}, ErrUnknownKey
		case key.Expired(time.Now()):
			return policy.Key{}, ErrExpiredKey
		}
		return key, nil
	}
	key, err := check(ctx)
	return key, check, err
}

// answerFailure answers a request whose credential did not authenticate;
// failed counts it against the client address where it could be a guess.
func (cfg Config) answerFailure(w http.ResponseWriter, r *http.Request, ch Challenge, err error, signed bool, failed func()) {
	switch {
	case errors.Is(err, ErrUnknownKey) || errors.Is(err, ErrDisabledKey) || errors.Is(err, ErrExpiredKey) || errors.Is(err, ErrNotAccessToken):
		cfg.Counters.Failures.Add(1)
		failed()
		msg := orDefault(ch.InvalidKey, "invalid API key")
		var why string
		if h := (unknownWithHint{}); errors.As(err, &h) {
			why = " (" + h.hint + ")"
		}
		unauthorized(w, ch.header(r, cfg.Realm, "invalid_token", msg+why), msg+why)
	case errors.Is(err, ErrTokenCheckUnavailable):
		// The token could not be checked. For a bearer that is not a
		// signed token (an opaque one, sent to introspection) this still
		// counts: an outage must not lift the limit on guessing.
		cfg.Counters.LookupErrors.Add(1)
		if !signed {
			failed()
		}
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, err.Error())
	case errors.Is(err, ErrInsufficientScope):
		cfg.Counters.Failures.Add(1)
		w.Header().Set("WWW-Authenticate", ch.header(r, cfg.Realm, "insufficient_scope", err.Error()))
		writeError(w, http.StatusForbidden, err.Error())
	case errors.Is(err, ErrInvalidToken):
		cfg.Counters.Failures.Add(1)
		failed()
		unauthorized(w, ch.header(r, cfg.Realm, "invalid_token", err.Error()), err.Error())
	default: // the key store is unavailable
		cfg.Counters.LookupErrors.Add(1)
		w.Header().Set("Retry-After", "1")
		writeError(w, http.StatusServiceUnavailable, "authentication is temporarily unavailable; retry shortly")
	}
}

// unknownWithHint is an unknown API key whose bearer was also not an
// access token of the issuer for a reason worth telling (a JWT of another
// issuer).
type unknownWithHint struct{ hint string }

func (e unknownWithHint) Error() string { return ErrUnknownKey.Error() + " (" + e.hint + ")" }
func (e unknownWithHint) Unwrap() error { return ErrUnknownKey }

// Bearer returns the credential of an "Authorization: Bearer <token>"
// header value (the scheme in any case, spaces around trimmed).
func Bearer(h string) (string, bool) {
	scheme, token, ok := strings.Cut(strings.TrimSpace(h), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// unauthorized answers 401 with the RFC 6750 challenge (Challenge.header:
// error="invalid_token" unless the request carried no credentials).
func unauthorized(w http.ResponseWriter, challenge, msg string) {
	w.Header().Set("WWW-Authenticate", challenge)
	writeError(w, http.StatusUnauthorized, msg)
}

// writeError answers with status and {"error": msg}, the shape of every
// other error of the REST API, so that clients parse one format.
func writeError(w http.ResponseWriter, status int, msg string) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<key>" stays readable in clients that show the body
	_ = enc.Encode(struct {
		Error string `json:"error"`
	}{msg})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	w.Write(buf.Bytes())
}

// limiters is a set of token buckets, one per key id.
type limiters struct {
	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

func newLimiters() *limiters { return &limiters{m: map[string]*bucket{}} }

// allow takes one token from the key's bucket. When empty it reports how
// long until a token is available.
func (l *limiters) allow(keyID string, rl policy.RateLimit, now time.Time) (time.Duration, bool) {
	if rl.Rate <= 0 {
		return 0, true
	}
	burst := burstOf(rl)
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[keyID]
	if !ok {
		if len(l.m) >= maxBuckets {
			l.evictFull(now, rl)
		}
		b = &bucket{tokens: burst, last: now}
		l.m[keyID] = b
	}
	b.tokens = math.Min(burst, b.tokens+now.Sub(b.last).Seconds()*rl.Rate)
	b.last = now
	if b.tokens >= 1 {
		b.tokens--
		return 0, true
	}
	return time.Duration((1 - b.tokens) / rl.Rate * float64(time.Second)), false
}

// maxBuckets bounds the buckets one limiter keeps (client addresses can
// be many); full buckets are dropped first, as a new bucket starts full.
const maxBuckets = 100000

// evictFull drops the buckets that have refilled; the caller holds l.mu.
func (l *limiters) evictFull(now time.Time, rl policy.RateLimit) {
	for id, b := range l.m {
		if b.tokens+now.Sub(b.last).Seconds()*rl.Rate >= burstOf(rl) {
			delete(l.m, id)
		}
	}
	if len(l.m) >= maxBuckets { // all busy: start over rather than grow
		l.m = map[string]*bucket{}
	}
}

func burstOf(rl policy.RateLimit) float64 {
	if rl.Burst < 1 {
		return math.Max(1, rl.Rate)
	}
	return float64(rl.Burst)
}
