package oauth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// BenchmarkValidateToken is the per-request cost of validating an access
// token with a warm JWKS cache (docs/benchmarks.md; goal ≤ 0.1 ms).
func BenchmarkValidateToken(b *testing.B) {
	as := authServerB(b)
	for _, alg := range []string{"RS256", "ES256", "EdDSA"} {
		b.Run(alg, func(b *testing.B) {
			v, err := New(testConfig(as.Issuer), Options{})
			if err != nil {
				b.Fatal(err)
			}
			kid := "k1"
			if alg != "RS256" {
				kid = "bench-" + alg
				as.RotateAlg(b, kid, alg)
			}
			token := as.Sign(b, kid, map[string]any{"sub": "bench", "aud": testAudience, "scope": "tools"})
			ctx := context.Background()
			if _, err := v.ValidateToken(ctx, token); err != nil { // warms the JWKS cache
				b.Fatal(err)
			}
			b.Run("verify", func(b *testing.B) {
				// Every iteration verifies the signature and claims: the
				// first request with a token.
				b.ReportAllocs()
				for b.Loop() {
					v.verified = newIntroCache()
					if _, err := v.ValidateToken(ctx, token); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run("repeat", func(b *testing.B) {
				// The same token again: the next requests of an agent.
				b.ReportAllocs()
				for b.Loop() {
					if _, err := v.ValidateToken(ctx, token); err != nil {
						b.Fatal(err)
					}
				}
			})
		})
	}
}

// BenchmarkAuthMiddleware compares a request authenticated by API key with
// one authenticated by an OAuth token, through the real middleware.
func BenchmarkAuthMiddleware(b *testing.B) {
	as := authServerB(b)
	cfg := testConfig(as.Issuer)
	cfg.RateLimit = policy.RateLimit{}
	v, err := New(cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	keys := auth.NewStaticKeys([]policy.Key{{ID: "k", SecretHash: policy.HashSecret("an-api-key-of-32-characters-long"), Servers: map[string]policy.Rule{"echo": {}}}})
	h := auth.Middleware(auth.Config{Keys: keys, Tokens: v, Counters: &auth.Counters{}}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	token := as.Sign(b, "k1", map[string]any{"sub": "bench", "aud": testAudience, "scope": "tools"})
	for name, bearer := range map[string]string{"api-key": "an-api-key-of-32-characters-long", "oauth-RS256": token} {
		b.Run(name, func(b *testing.B) {
			req := httptest.NewRequest("POST", "/mcp", nil)
			req.Header.Set("Authorization", "Bearer "+bearer)
			b.ReportAllocs()
			for b.Loop() {
				w := httptest.NewRecorder()
				h.ServeHTTP(w, req)
				if w.Code != 200 {
					b.Fatalf("status %d %s", w.Code, w.Body)
				}
			}
		})
	}
}

// BenchmarkColdKeys is what a cold start adds: discovery of the issuer's
// metadata and the JWKS fetch (or only the fetch when jwks_url is set, as
// the CDK app does for Cognito), over loopback to the real authorization
// server.
func BenchmarkColdKeys(b *testing.B) {
	as := authServerB(b)
	for name, jwks := range map[string]string{"discovery+jwks": "", "jwks-only": as.Issuer + "/jwks"} {
		b.Run(name, func(b *testing.B) {
			cfg := testConfig(as.Issuer)
			cfg.JWKSURL = jwks
			for b.Loop() {
				v, err := New(cfg, Options{})
				if err != nil {
					b.Fatal(err)
				}
				if err := v.Prefetch(context.Background()); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
