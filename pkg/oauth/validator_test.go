package oauth

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

const testAudience = "http://127.0.0.1:8765/mcp"

var (
	asOnce sync.Once
	asT    *testenv.AuthServer
)

// authServer is one real authorization server shared by the package's
// tests (started on first use, stopped when the process exits).
func authServer(t *testing.T) *testenv.AuthServer { return authServerB(t) }

func authServerB(t testing.TB) *testenv.AuthServer {
	t.Helper()
	asOnce.Do(func() { asT = testenv.StartAuthServerShared(t) })
	if asT == nil {
		t.Fatal("authorization server did not start")
	}
	return asT
}

func testConfig(issuer string) Config {
	return Config{
		Issuer:   issuer,
		Audience: testAudience,
		Grants: []Grant{
			{Match: Match{Scope: "tools"}, Servers: map[string]policy.Rule{"echo": {}}},
			{Match: Match{Group: "ops"}, Servers: map[string]policy.Rule{"fs": {ToolPrefixes: []string{"read_"}}}, Admin: true},
			{Match: Match{ClientID: "narrow"}, Servers: map[string]policy.Rule{"echo": {ToolPrefixes: []string{"echo"}}},
				RateLimit: policy.RateLimit{Rate: 2, Burst: 3}},
			{Match: Match{Sub: "alice", Scope: "files"}, Servers: map[string]policy.Rule{"fs": {ToolPrefixes: []string{"write_"}}}},
		},
		RateLimit: policy.RateLimit{Rate: 50, Burst: 100},
	}
}

func newValidator(t *testing.T, cfg Config) *Validator {
	t.Helper()
	v, err := New(cfg, Options{})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// forge signs claims with a key the authorization server never published.
func forge(t *testing.T, alg jose.SignatureAlgorithm, key any, kid string, claims map[string]any) string {
	t.Helper()
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader("kid", kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(claims)
	jws, err := s.Sign(payload)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func b64(v any) string {
	b, _ := json.Marshal(v)
	return base64.RawURLEncoding.EncodeToString(b)
}

func goodClaims(issuer string) map[string]any {
	now := time.Now().Unix()
	return map[string]any{"iss": issuer, "sub": "mallory", "aud": testAudience, "scope": "tools", "exp": now + 600, "iat": now}
}

// TestValidateToken checks each validation rule with tokens from the real
// authorization server (and a few forged ones it could never issue).
func TestValidateToken(t *testing.T) {
	as := authServer(t)
	v := newValidator(t, testConfig(as.Issuer))
	ctx := context.Background()
	res := form("resource", testAudience)
	with := func(kv ...string) url.Values {
		f := form(kv...)
		for k, x := range res {
			if f.Get(k) == "" {
				f[k] = x
			}
		}
		return f
	}
	otherKey, _ := rsa.GenerateKey(rand.Reader, 2048)

	// The JWKS the server publishes, for the algorithm-confusion token.
	good := as.Token(t, "agent-1", with("scope", "tools"))
	if _, err := v.ValidateToken(ctx, good); err != nil {
		t.Fatalf("valid token refused: %v", err)
	}
	tampered := func() string {
		p := strings.Split(as.Token(t, "agent-1", with("scope", "tools")), ".")
		var c map[string]any
		raw, _ := base64.RawURLEncoding.DecodeString(p[1])
		json.Unmarshal(raw, &c)
		c["scope"] = "tools ops"
		c["groups"] = []string{"ops"}
		return p[0] + "." + b64(c) + "." + p[2]
	}()
	hsConfusion := func() string {
		// HS256 keyed with the server's public RSA key: the classic
		// algorithm-confusion forgery.
		pub := publicKeyPEM(t, v)
		h := b64(map[string]any{"alg": "HS256", "typ": "JWT", "kid": "k1"})
		p := b64(goodClaims(as.Issuer))
		mac := hmac.New(sha256.New, pub)
		mac.Write([]byte(h + "." + p))
		return h + "." + p + "." + base64.RawURLEncoding.EncodeToString(mac.Sum(nil))
	}()

	cases := []struct {
		name    string
		token   string
		wantErr error  // nil: accepted
		msg     string // part of the error message
		id      string
		servers map[string]policy.Rule
		admin   bool
		rate    policy.RateLimit
	}{
		{name: "valid scope grant", token: good, id: "oauth:sub:agent-1",
			servers: map[string]policy.Rule{"echo": {}}, rate: policy.RateLimit{Rate: 50, Burst: 100}},
		{name: "group grant is admin", token: as.Token(t, "agent-2", with("x_groups", "ops")), id: "oauth:sub:agent-2", admin: true,
			servers: map[string]policy.Rule{"fs": {ToolPrefixes: []string{"read_"}}}, rate: policy.RateLimit{Rate: 50, Burst: 100}},
		{name: "client grant with its own rate limit", token: as.Token(t, "narrow", res), id: "oauth:sub:narrow",
			servers: map[string]policy.Rule{"echo": {ToolPrefixes: []string{"echo"}}}, rate: policy.RateLimit{Rate: 2, Burst: 3}},
		{name: "grants add up", token: as.Token(t, "narrow", with("scope", "tools", "x_groups", "ops")), id: "oauth:sub:narrow", admin: true,
			servers: map[string]policy.Rule{"echo": {}, "fs": {ToolPrefixes: []string{"read_"}}}, rate: policy.RateLimit{Rate: 2, Burst: 3}},
		{name: "sub and scope both required", token: as.Token(t, "app", with("x_sub", "alice", "scope", "files tools")), id: "oauth:sub:alice",
			servers: map[string]policy.Rule{"echo": {}, "fs": {ToolPrefixes: []string{"write_"}}}, rate: policy.RateLimit{Rate: 50, Burst: 100}},
		{name: "expired within the clock skew", token: as.Token(t, "agent-1", with("scope", "tools", "x_exp", "-5")), id: "oauth:sub:agent-1",
			servers: map[string]policy.Rule{"echo": {}}, rate: policy.RateLimit{Rate: 50, Burst: 100}},

		{name: "expired", token: as.Token(t, "agent-1", with("scope", "tools", "x_exp", "-120")), wantErr: auth.ErrInvalidToken, msg: "expired"},
		{name: "not yet valid", token: as.Token(t, "agent-1", with("scope", "tools", "x_nbf", "120")), wantErr: auth.ErrInvalidToken, msg: "not valid before"},
		{name: "not yet valid by far", token: as.Token(t, "agent-1", with("scope", "tools", "x_nbf", "600")), wantErr: auth.ErrInvalidToken, msg: "nbf"},
		{name: "wrong audience", token: as.Token(t, "agent-1", form("scope", "tools", "resource", "http://127.0.0.1:9999/other")), wantErr: auth.ErrInvalidToken, msg: "not for this resource"},
		{name: "no audience", token: as.Token(t, "agent-1", form("scope", "tools")), wantErr: auth.ErrInvalidToken, msg: "no audience"},
		{name: "wrong issuer", token: as.Token(t, "agent-1", with("scope", "tools", "x_iss", "http://127.0.0.1:1/evil")), wantErr: auth.ErrNotAccessToken, msg: "issued by"},
		{name: "tampered claims", token: tampered, wantErr: auth.ErrInvalidToken, msg: "bad signature"},
		{name: "signed by another key with the server's kid", token: forge(t, jose.RS256, otherKey, "k1", goodClaims(as.Issuer)), wantErr: auth.ErrInvalidToken, msg: "bad signature"},
		{name: "alg none", token: b64(map[string]any{"alg": "none", "typ": "JWT"}) + "." + b64(goodClaims(as.Issuer)) + ".", wantErr: auth.ErrInvalidToken, msg: "malformed"},
		{name: "HS256 keyed with the public key", token: hsConfusion, wantErr: auth.ErrInvalidToken, msg: "malformed"},
		{name: "valid token, no grant matches", token: as.Token(t, "nobody", with("scope", "other")), wantErr: auth.ErrInsufficientScope, msg: "oauth:sub:nobody"},
		{name: "ID token", token: as.Sign(t, "k1", map[string]any{"sub": "agent-1", "aud": testAudience, "scope": "tools", "token_use": "id"}),
			wantErr: auth.ErrInvalidToken, msg: "ID token"},
		{name: "API key", token: "dev-key-admin", wantErr: auth.ErrNotAccessToken},
		{name: "opaque token without introspection", token: "2YotnFZFEjr1zCsicMWpAA", wantErr: auth.ErrNotAccessToken},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			key, err := v.ValidateToken(ctx, c.token)
			if c.wantErr != nil {
				if !errors.Is(err, c.wantErr) {
					t.Fatalf("error %v, want %v", err, c.wantErr)
				}
				if !strings.Contains(err.Error(), c.msg) {
					t.Errorf("error %q does not say %q", err, c.msg)
				}
				if strings.Contains(err.Error(), c.token) {
					t.Errorf("the error repeats the token")
				}
				return
			}
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			if key.ID != c.id || key.Admin != c.admin || key.RateLimit != c.rate {
				t.Errorf("key %q admin=%v rate=%v, want %q admin=%v rate=%v", key.ID, key.Admin, key.RateLimit, c.id, c.admin, c.rate)
			}
			if !sameServers(key.Servers, c.servers) {
				t.Errorf("servers %v, want %v", key.Servers, c.servers)
			}
			p := policy.For(key)
			if p.KeyID != c.id {
				t.Errorf("policy KeyID %q", p.KeyID)
			}
		})
	}
}

func sameServers(a, b map[string]policy.Rule) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// publicKeyPEM returns the authorization server's RSA public key as PEM
// (what an attacker would use as an HMAC secret).
func publicKeyPEM(t *testing.T, v *Validator) []byte {
	t.Helper()
	ks, err := v.setup(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	keys, err := ks.current(context.Background())
	if err != nil || len(keys) == 0 {
		t.Fatalf("keys: %v", err)
	}
	der, err := x509.MarshalPKIXPublicKey(keys[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

// TestKeyRotation: a token signed with a key the authorization server
// added after the gateway fetched its JWKS is accepted after one refetch;
// a burst of unknown kids causes no further fetch within the interval.
func TestKeyRotation(t *testing.T) {
	as := authServer(t)
	v := newValidator(t, testConfig(as.Issuer))
	ctx := context.Background()
	claims := map[string]any{"sub": "rotated", "aud": testAudience, "scope": "tools"}
	if _, err := v.ValidateToken(ctx, as.Sign(t, "k1", claims)); err != nil {
		t.Fatal(err)
	}
	if n := v.JWKSFetches(); n != 1 {
		t.Fatalf("%d JWKS fetches after the first token, want 1", n)
	}
	kid := "k-rot-" + time.Now().Format("150405.000000")
	as.Rotate(t, kid)
	key, err := v.ValidateToken(ctx, as.Sign(t, kid, claims))
	if err != nil || key.ID != "oauth:sub:rotated" {
		t.Fatalf("token with the new key: %v %v", key, err)
	}
	if n := v.JWKSFetches(); n != 2 {
		t.Fatalf("%d JWKS fetches after the rotation, want 2", n)
	}
	// Forged kids: refused, and no refetch within RefetchInterval.
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	for i := range 20 {
		c := goodClaims(as.Issuer)
		_, err := v.ValidateToken(ctx, forge(t, jose.RS256, other, "forged-"+string(rune('a'+i)), c))
		if !errors.Is(err, auth.ErrInvalidToken) {
			t.Fatalf("forged kid: %v", err)
		}
	}
	if n := v.JWKSFetches(); n != 2 {
		t.Errorf("%d JWKS fetches after 20 forged kids, want still 2 (rate-limited)", n)
	}
	// The old key still works (the server keeps publishing it).
	if _, err := v.ValidateToken(ctx, as.Sign(t, "k1", claims)); err != nil {
		t.Errorf("old key after rotation: %v", err)
	}
}

// TestRefetchAfterInterval: once RefetchInterval has passed, an unknown
// kid triggers a fetch again.
func TestRefetchAfterInterval(t *testing.T) {
	as := authServer(t)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	cfg := testConfig(as.Issuer)
	cfg.RefetchInterval = Duration(time.Minute)
	v, err := New(cfg, Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claims := map[string]any{"sub": "r", "aud": testAudience, "scope": "tools", "exp": now.Unix() + 3600}
	if _, err := v.ValidateToken(ctx, as.Sign(t, "k1", claims)); err != nil {
		t.Fatal(err)
	}
	kid := "k-late-" + time.Now().Format("150405.000000")
	as.Rotate(t, kid)
	// The first unknown kid refetches (the last fetch was for the set, not
	// for a kid, and lies a minute back only after the clock moves).
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := v.ValidateToken(ctx, as.Sign(t, kid, claims)); err != nil {
		t.Fatalf("after the interval: %v", err)
	}
	if n := v.JWKSFetches(); n != 2 {
		t.Errorf("%d fetches, want 2", n)
	}
}

// TestIssuerUnreachable: with the authorization server down, a token of
// its issuer is a 503-class error, not a silent pass to the API key path.
func TestIssuerUnreachable(t *testing.T) {
	issuer := "http://127.0.0.1:1"
	v := newValidator(t, testConfig(issuer))
	key, _ := rsa.GenerateKey(rand.Reader, 2048)
	_, err := v.ValidateToken(context.Background(), forge(t, jose.RS256, key, "k1", goodClaims(issuer)))
	if !errors.Is(err, auth.ErrTokenCheckUnavailable) {
		t.Fatalf("error %v, want ErrTokenCheckUnavailable", err)
	}
}

// TestIntrospection: opaque tokens through RFC 7662, cached.
func TestIntrospection(t *testing.T) {
	as := authServer(t)
	cfg := testConfig(as.Issuer)
	cfg.Introspection = &Introspection{ClientID: "gateway", ClientSecret: "s"}
	v := newValidator(t, cfg)
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).Unix()
	before := as.Introspections(t)
	as.NextIntrospection(t, map[string]any{"active": true, "sub": "svc", "scope": "tools", "aud": testAudience, "iss": as.Issuer, "exp": exp})
	key, err := v.IntrospectToken(ctx, "opaque-token-1")
	if err != nil || key.ID != "oauth:sub:svc" || !sameServers(key.Servers, map[string]policy.Rule{"echo": {}}) {
		t.Fatalf("active token: %+v %v", key, err)
	}
	if _, err := v.IntrospectToken(ctx, "opaque-token-1"); err != nil {
		t.Fatal(err)
	}
	if n := as.Introspections(t) - before; n != 1 {
		t.Errorf("%d introspection requests for two uses, want 1 (cached)", n)
	}
	as.NextIntrospection(t, map[string]any{"active": false})
	if _, err := v.IntrospectToken(ctx, "opaque-token-2"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("inactive token: %v", err)
	}
	as.NextIntrospection(t, map[string]any{"active": true, "sub": "svc", "scope": "tools", "aud": "http://elsewhere/mcp", "exp": exp})
	if _, err := v.IntrospectToken(ctx, "opaque-token-3"); !errors.Is(err, auth.ErrInvalidToken) {
		t.Errorf("token for another audience: %v", err)
	}
}

// TestVerifiedCacheHonoursExpiry: a token validated once (and cached) is
// refused once it expires.
func TestVerifiedCacheHonoursExpiry(t *testing.T) {
	as := authServer(t)
	now := time.Now()
	var mu sync.Mutex
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	v, err := New(testConfig(as.Issuer), Options{Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	token := as.Sign(t, "k1", map[string]any{"sub": "short", "aud": testAudience, "scope": "tools", "exp": now.Unix() + 60})
	for range 2 {
		if _, err := v.ValidateToken(ctx, token); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	now = now.Add(2 * time.Minute)
	mu.Unlock()
	if _, err := v.ValidateToken(ctx, token); !errors.Is(err, auth.ErrInvalidToken) || !strings.Contains(err.Error(), "expired") {
		t.Errorf("expired cached token: %v", err)
	}
}
