package awsrt

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

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Rate limits on Lambda. A key's rate_limit is a token bucket kept in
// each gateway instance's memory (pkg/auth): with N warm instances a key
// can make up to N times its rate. With TOOL_RAG_RATE_LIMIT=exact the
// gateway also enforces the limit across all instances, exactly: fixed
// windows of RateLimitWindow (TOOL_RAG_RATE_LIMIT_WINDOW seconds, default
// 60) of at most ceil(rate × window) requests per key, counted with one
// atomic conditional UpdateItem per request in the sessions table
// (dynamo.RateCounter). Cost: one write request unit per authenticated
// request of a key that has a rate limit (on-demand: about $0.625 per
// million in us-east-1) and a few milliseconds of latency. When DynamoDB
// does not answer, the request is let through (the per-instance limit
// still applies), logged and counted in rate_limit_store_errors_total.

// Rate limit modes (TOOL_RAG_RATE_LIMIT).
const (
	RateLimitInstance = "instance"
	RateLimitExact    = "exact"
)

// DefaultRateLimitWindow is the window of the exact rate limit.
const DefaultRateLimitWindow = time.Minute

// rateLimitTimeout bounds one counter update.
const rateLimitTimeout = 2 * time.Second

// exactLimiter enforces the keys' rate limits across instances.
type exactLimiter struct {
	counter *dynamo.RateCounter
	window  time.Duration
	limits  *sync.Map // key id → policy.RateLimit, filled by keyLookup
	log     *slog.Logger

	limited, storeErrors atomic.Int64
}

// windowLimit is a rate's request budget per window.
func windowLimit(rl policy.RateLimit, window time.Duration) int64 {
	return int64(math.Ceil(rl.Rate * window.Seconds()))
}

func (l *exactLimiter) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, ok := auth.PolicyFrom(r.Context())
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
		ctx, cancel := context.WithTimeout(r.Context(), rateLimitTimeout)
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
