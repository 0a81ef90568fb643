package auth

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// counterFunc is a Counter from a function: the DynamoDB-backed one is
// exercised across instances by pkg/awsrt's TestExactRateLimitAcrossInstances.
type counterFunc func(keyID string, limit int64) (bool, time.Duration, error)

func (f counterFunc) Take(_ context.Context, keyID string, limit int64, _ time.Duration, _ time.Time) (bool, time.Duration, error) {
	return f(keyID, limit)
}

func TestExactMiddleware(t *testing.T) {
	tests := []struct {
		name        string
		rate        policy.RateLimit
		counter     counterFunc
		wantStatus  int
		wantRetry   string
		wantLimited int64
		wantErrors  int64
	}{
		{"no limit: counter not asked", policy.RateLimit{},
			func(string, int64) (bool, time.Duration, error) { panic("asked") }, 200, "", 0, 0},
		{"within budget", policy.RateLimit{Rate: 1},
			func(_ string, limit int64) (bool, time.Duration, error) {
				if limit != 60 {
					return false, 0, errors.New("wrong budget")
				}
				return true, 0, nil
			}, 200, "", 0, 0},
		{"over budget", policy.RateLimit{Rate: 1},
			func(string, int64) (bool, time.Duration, error) { return false, 1500 * time.Millisecond, nil }, 429, "2", 1, 0},
		{"store down: let through", policy.RateLimit{Rate: 1},
			func(string, int64) (bool, time.Duration, error) { return false, 0, errors.New("timeout") }, 200, "", 0, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := NewExact(ExactConfig{Counter: tc.counter, Window: time.Minute})
			keys := l.Learn(oneKey{policy.Key{ID: "k1", RateLimit: tc.rate}})
			if _, err := keys.LookupKey(context.Background(), "hash"); err != nil {
				t.Fatal(err)
			}
			h := l.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }))
			r := httptest.NewRequest(http.MethodPost, "/mcp", nil)
			r = r.WithContext(policy.NewContext(r.Context(), policy.Policy{KeyID: "k1"}))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != tc.wantStatus || w.Header().Get("Retry-After") != tc.wantRetry {
				t.Errorf("status %d Retry-After %q, want %d %q", w.Code, w.Header().Get("Retry-After"), tc.wantStatus, tc.wantRetry)
			}
			if l.Limited() != tc.wantLimited || l.StoreErrors() != tc.wantErrors {
				t.Errorf("limited/storeErrors = %d/%d, want %d/%d", l.Limited(), l.StoreErrors(), tc.wantLimited, tc.wantErrors)
			}
		})
	}
}

// oneKey is a key store holding one key.
type oneKey struct{ key policy.Key }

func (o oneKey) LookupKey(context.Context, string) (policy.Key, error) { return o.key, nil }
