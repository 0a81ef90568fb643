package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

func TestMiddleware(t *testing.T) {
	keys := NewStaticKeys([]policy.Key{
		{ID: "full", SecretHash: policy.HashSecret("s-full"), Servers: map[string]policy.Rule{"echo": {}}},
		{ID: "revoked", SecretHash: policy.HashSecret("s-revoked"), Disabled: true},
		{ID: "limited", SecretHash: policy.HashSecret("s-limited"), RateLimit: policy.RateLimit{Rate: 1, Burst: 2}},
	})
	var seen policy.Policy
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, found := policy.FromContext(r.Context())
		if !found {
			t.Error("no policy in context")
		}
		seen = p
	})
	c := &Counters{}
	h := Middleware(Config{Keys: keys, Counters: c}, ok)
	tests := []struct {
		name, header string
		want         int
		challenge    string // the WWW-Authenticate value of a 401
		body         string // the JSON body of a 401
	}{
		{"missing", "", 401, `Bearer realm="mcp-gateway"`, `{"error":"missing or malformed Authorization header: use \"Authorization: Bearer <key>\""}`},
		{"wrong scheme", "Basic s-full", 401, `Bearer realm="mcp-gateway"`, ""},
		{"empty token", "Bearer ", 401, `Bearer realm="mcp-gateway"`, ""},
		{"unknown", "Bearer nope", 401, `Bearer realm="mcp-gateway", error="invalid_token", error_description="invalid API key"`, `{"error":"invalid API key"}`},
		{"revoked", "Bearer s-revoked", 401, `Bearer realm="mcp-gateway", error="invalid_token", error_description="invalid API key"`, `{"error":"invalid API key"}`},
		{"valid", "Bearer s-full", 200, "", ""},
		{"case-insensitive scheme", "bearer s-full", 200, "", ""},
	}
	for _, tt := range tests {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/mcp", nil)
		if tt.header != "" {
			req.Header.Set("Authorization", tt.header)
		}
		h.ServeHTTP(rec, req)
		if rec.Code != tt.want {
			t.Errorf("%s: status %d, want %d", tt.name, rec.Code, tt.want)
		}
		if tt.want == 401 {
			if got := rec.Header().Get("WWW-Authenticate"); got != tt.challenge {
				t.Errorf("%s: WWW-Authenticate = %q, want %q", tt.name, got, tt.challenge)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("%s: Content-Type %q", tt.name, ct)
			}
			if got := strings.TrimSpace(rec.Body.String()); tt.body != "" && got != tt.body {
				t.Errorf("%s: body %s, want %s", tt.name, got, tt.body)
			}
			if strings.Contains(rec.Body.String(), "s-") {
				t.Errorf("%s: response leaks the secret: %q", tt.name, rec.Body.String())
			}
		}
	}
	if seen.KeyID != "full" || !seen.AllowsTool("echo", "x") || seen.AllowsTool("other", "x") {
		t.Errorf("policy in context = %+v", seen)
	}
	if c.Failures.Load() != 5 || c.Authenticated.Load() != 2 {
		t.Errorf("counters: failures %d, authenticated %d", c.Failures.Load(), c.Authenticated.Load())
	}

	// Rate limit: burst 2 then 429 with Retry-After.
	codes := []int{}
	var retry string
	for i := 0; i < 3; i++ {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", "/mcp", nil)
		req.Header.Set("Authorization", "Bearer s-limited")
		h.ServeHTTP(rec, req)
		codes = append(codes, rec.Code)
		retry = rec.Header().Get("Retry-After")
	}
	if codes[0] != 200 || codes[1] != 200 || codes[2] != 429 || retry != "1" {
		t.Errorf("rate limit codes %v, Retry-After %q", codes, retry)
	}
}

func TestDisabledGrantsAll(t *testing.T) {
	h := Middleware(Config{Disabled: true}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := policy.FromContext(r.Context())
		if !p.AllowsTool("any", "tool") {
			t.Error("auth disabled must grant everything")
		}
	}))
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil))
}

type countingLookup struct {
	calls int
	key   policy.Key
	err   error
}

func (c *countingLookup) LookupKey(ctx context.Context, h string) (policy.Key, error) {
	c.calls++
	return c.key, c.err
}

func TestCachedTTL(t *testing.T) {
	next := &countingLookup{key: policy.Key{ID: "k", SecretHash: "h"}}
	c := NewCached(next, time.Minute)
	now := time.Unix(1000, 0)
	c.now = func() time.Time { return now }
	for i := 0; i < 3; i++ {
		if k, err := c.LookupKey(context.Background(), "h"); err != nil || k.ID != "k" {
			t.Fatal(k, err)
		}
	}
	if next.calls != 1 {
		t.Fatalf("lookups = %d, want 1 (cached)", next.calls)
	}
	next.key.Disabled = true // revoked in the store
	now = now.Add(61 * time.Second)
	if k, _ := c.LookupKey(context.Background(), "h"); !k.Disabled {
		t.Fatal("revocation not seen after the TTL")
	}
	next.err = errors.New("store down")
	now = now.Add(61 * time.Second)
	if _, err := c.LookupKey(context.Background(), "h"); err == nil {
		t.Fatal("store error swallowed")
	}
	next.err = nil
	if _, err := c.LookupKey(context.Background(), "h"); err != nil {
		t.Fatal("transient error was cached")
	}
}

// TestRateLimitSharedAcrossRoutes: a key's rate limit covers every handler
// wrapped with the same Counters (regression: the MCP endpoint and the REST
// API each had their own buckets, doubling every key's rate).
func TestRateLimitSharedAcrossRoutes(t *testing.T) {
	keys := NewStaticKeys([]policy.Key{
		{ID: "limited", SecretHash: policy.HashSecret("s-limited"), RateLimit: policy.RateLimit{Rate: 0.01, Burst: 2}},
	})
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	shared := &Counters{}
	mcpRoute := Middleware(Config{Keys: keys, Counters: shared}, ok)
	restRoute := Middleware(Config{Keys: keys, Counters: shared}, ok)
	other := Middleware(Config{Keys: keys, Counters: &Counters{}}, ok)
	do := func(h http.Handler) int {
		req := httptest.NewRequest("POST", "/", nil)
		req.Header.Set("Authorization", "Bearer s-limited")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code
	}
	for i, c := range []struct {
		h    http.Handler
		want int
	}{{mcpRoute, 200}, {restRoute, 200}, {mcpRoute, 429}, {restRoute, 429}, {other, 200}} {
		if got := do(c.h); got != c.want {
			t.Errorf("request %d: %d, want %d", i+1, got, c.want)
		}
	}
	if n := shared.RateLimited.Load(); n != 2 {
		t.Errorf("RateLimited = %d, want 2", n)
	}
}
