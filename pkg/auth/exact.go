// Exact rate limits: keys' rate limits enforced exactly across gateway
// instances. A key's rate_limit is a token bucket kept in each gateway
// instance's memory (Middleware): with N warm instances a key can make up
// to N times its rate. Exact also enforces the limit across all
// instances: fixed windows of at most ceil(rate × window) requests per
// key, counted by a shared Counter (on Lambda dynamo.RateCounter: one
// atomic conditional UpdateItem per request in the sessions table). Cost
// there: one write request unit per authenticated request of a key that
// has a rate limit (on-demand: about $0.625 per million in us-east-1) and
// a few milliseconds of latency. When the counter does not answer, the
// request is let through (the per-instance limit still applies), logged
// and counted in StoreErrors.

package auth

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Counter counts a key's requests in the current window of a shared
// store and reports whether one more is allowed (dynamo.RateCounter).
type Counter interface {
	Take(ctx context.Context, keyID string, limit int64, window time.Duration, now time.Time) (ok bool, retryAfter time.Duration, err error)
}

// ExactConfig configures an Exact limiter.
type ExactConfig struct {
	Counter Counter
	Window  time.Duration
	Log     *slog.Logger
}

// takeTimeout bounds one counter update.
const takeTimeout = 2 * time.Second

// Exact enforces the keys' rate limits across instances.
type Exact struct {
	counter Counter
	window  time.Duration
	limits  sync.Map // key id → policy.RateLimit, learnt by the key lookup (Learn)
	log     *slog.Logger

	limited, storeErrors atomic.Int64
}

// NewExact returns an exact limiter.
func NewExact(cfg ExactConfig) *Exact {
	log := cfg.Log
	if log == nil {
		log = slog.Default()
	}
	return &Exact{counter: cfg.Counter, window: cfg.Window, log: log}
}

// Learn wraps the gateway's key lookup: each key it finds tells the
// limiter its rate limit (the policy a request carries has none).
func (l *Exact) Learn(next KeyLookup) KeyLookup { return learning{next, l} }

type learning struct {
	next KeyLookup
	l    *Exact
}

func (k learning) LookupKey(ctx context.Context, secretHash string) (policy.Key, error) {
	key, err := k.next.LookupKey(ctx, secretHash)
	if err == nil {
		k.l.limits.Store(key.ID, key.RateLimit)
	}
	return key, err
}

// Limited is the number of requests refused.
func (l *Exact) Limited() int64 { return l.limited.Load() }

// StoreErrors is the number of requests let through because the counter
// did not answer.
func (l *Exact) StoreErrors() int64 { return l.storeErrors.Load() }

// windowLimit is a rate's request budget per window.
func windowLimit(rl policy.RateLimit, window time.Duration) int64 {
	return int64(math.Ceil(rl.Rate * window.Seconds()))
}

// Middleware refuses, with 429 and Retry-After, the requests of a key
// over its budget in the current window.
func (l *Exact) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := policy.FromContext(r.Context())
		var rl policy.RateLimit
		if ok {
			if v, found := l.limits.Load(p.KeyID); found {
				rl = v.(policy.RateLimit)
			}
		}
		if rl.Rate <= 0 {
			next.ServeHTTP(w, r)
			return
		}
		limit := windowLimit(rl, l.window)
		ctx, cancel := context.WithTimeout(r.Context(), takeTimeout)
		allowed, retry, err := l.counter.Take(ctx, p.KeyID, limit, l.window, time.Now())
		cancel()
		switch {
		case err != nil:
			l.storeErrors.Add(1)
			l.log.Error("exact rate limit unavailable; the request goes through under the per-instance limit", "key", p.KeyID, "error", err)
		case !allowed:
			l.limited.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(retry.Seconds()))))
			w.WriteHeader(http.StatusTooManyRequests)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": fmt.Sprintf(
				"rate limit exceeded for key %q (%d requests per %s across all gateway instances)", p.KeyID, limit, l.window)})
			return
		}
		next.ServeHTTP(w, r)
	})
}
