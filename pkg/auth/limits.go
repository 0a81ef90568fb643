package auth

import (
	"context"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// tokensKey carries a request's access to its key's rate-limit bucket.
type tokensKey struct{}

type tokenTaker func(n int) (granted int, wait time.Duration)

// TakeTokens takes up to n more tokens from the rate-limit bucket of the
// request's key, beyond the one the request itself cost, for work that
// fans out (each call of a run_tools batch costs one token). It returns
// how many it took and, when fewer than n, how long until the next token.
// A request without a rate limit gets all n.
func TakeTokens(ctx context.Context, n int) (granted int, wait time.Duration) {
	if n <= 0 {
		return 0, 0
	}
	take, ok := ctx.Value(tokensKey{}).(tokenTaker)
	if !ok {
		return n, 0
	}
	return take(n)
}

func withTokens(ctx context.Context, l *limiters, keyID string, rl policy.RateLimit) context.Context {
	if rl.Rate <= 0 {
		return ctx
	}
	return context.WithValue(ctx, tokensKey{}, tokenTaker(func(n int) (int, time.Duration) {
		now := time.Now()
		for i := 0; i < n; i++ {
			if wait, ok := l.allow(keyID, rl, now); !ok {
				return i, wait
			}
		}
		return n, 0
	}))
}

// peek reports how long until a token is available in the bucket of id
// (0: one is available now), without taking one.
func (l *limiters) peek(id string, rl policy.RateLimit, now time.Time) time.Duration {
	if rl.Rate <= 0 {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.m[id]
	if !ok {
		return 0
	}
	tokens := min(burstOf(rl), b.tokens+now.Sub(b.last).Seconds()*rl.Rate)
	if tokens >= 1 {
		return 0
	}
	return time.Duration((1 - tokens) / rl.Rate * float64(time.Second))
}

// ClientAddr is the address failed authentications are counted under: the
// connection's peer address (on AWS Lambda the adapters set it from the
// request context's source IP, which the client cannot forge). With
// trustForwardedFor (a reverse proxy the operator runs in front of the
// gateway, MCP_GATEWAY_TRUST_FORWARDED_FOR) it is the last
// X-Forwarded-For entry: the one that proxy appended. An IPv6 address
// counts as its /64, which one client usually holds whole.
func ClientAddr(r *http.Request, trustForwardedFor bool) string {
	addr := r.RemoteAddr
	if trustForwardedFor {
		if xff := r.Header.Values("X-Forwarded-For"); len(xff) > 0 {
			parts := strings.Split(xff[len(xff)-1], ",")
			if last := strings.TrimSpace(parts[len(parts)-1]); last != "" {
				addr = last
			}
		}
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	if ip == nil {
		return host
	}
	if ip.To4() == nil {
		return ip.Mask(net.CIDRMask(64, 128)).String() + "/64"
	}
	return ip.String()
}
