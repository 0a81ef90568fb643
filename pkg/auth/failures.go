package auth

import (
	"encoding/hex"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// failureGuard bounds how fast credentials can be guessed from one client
// address without letting that address's failures lock out the
// credentials that work behind it (a NAT, a proxy or a hosted agent
// platform puts many users behind few addresses):
//
//   - a request without credentials guesses nothing and is not counted;
//   - each distinct credential that fails from an address counts once
//     against that address (perAddr): guessing means trying many
//     distinct credentials, so this bounds the guessing rate;
//   - the same failing credential sent again (a misconfigured client)
//     fills only its own bucket (perCred), and only it is refused;
//   - when an address is over its limit, a credential that authenticated
//     recently (good) or an access token whose signature is checked
//     (it cannot be guessed) is still evaluated; any other credential is
//     answered 429 before it is looked up.
//
// A credential never seen to work, presented from an address that is
// guessing right now, waits Retry-After: that is the price of a bounded
// guessing rate, as no response may tell a guess that works from one
// that does not.
type failureGuard struct {
	perAddr *limiters
	perCred *limiters
	good    *goodSet
}

func newFailureGuard() *failureGuard {
	return &failureGuard{perAddr: newLimiters(), perCred: newLimiters(), good: newGoodSet(goodTTL, maxGood)}
}

// credKey names one credential presented from one address (a prefix of
// its SHA-256 is enough to tell credentials apart; the secret itself is
// never kept).
func credKey(client string, sum [32]byte) string {
	return client + "\x00" + hex.EncodeToString(sum[:12])
}

// wait reports how long the request must wait (0: evaluate it now).
func (g *failureGuard) wait(client string, sum [32]byte, signed bool, rl policy.RateLimit, now time.Time) time.Duration {
	if rl.Rate <= 0 {
		return 0
	}
	if w := g.perCred.peek(credKey(client, sum), rl, now); w > 0 {
		return w
	}
	if signed || g.good.has(sum, now) {
		return 0
	}
	return g.perAddr.peek(client, rl, now)
}

// failed counts a failed authentication of the credential from client.
func (g *failureGuard) failed(client string, sum [32]byte, rl policy.RateLimit, now time.Time) {
	g.good.remove(sum)
	if rl.Rate <= 0 {
		return
	}
	key := credKey(client, sum)
	if !g.perCred.has(key) {
		g.perAddr.allow(client, rl, now) // a credential not tried from here before
	}
	g.perCred.allow(key, rl, now)
}

// succeeded remembers a credential that authenticated.
func (g *failureGuard) succeeded(sum [32]byte, now time.Time) { g.good.add(sum, now) }

// has reports whether id has a bucket.
func (l *limiters) has(id string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, ok := l.m[id]
	return ok
}

const (
	goodTTL = 24 * time.Hour
	maxGood = 100000
)

// goodSet holds the SHA-256 of credentials that authenticated within ttl.
type goodSet struct {
	ttl time.Duration
	max int
	mu  sync.Mutex
	m   map[[32]byte]time.Time
}

func newGoodSet(ttl time.Duration, max int) *goodSet {
	return &goodSet{ttl: ttl, max: max, m: map[[32]byte]time.Time{}}
}

func (s *goodSet) add(sum [32]byte, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.m[sum]; ok && now.Sub(t) < time.Minute {
		return // refreshed recently: spare the write
	}
	if len(s.m) >= s.max {
		for k, t := range s.m {
			if now.Sub(t) >= s.ttl {
				delete(s.m, k)
			}
		}
		if len(s.m) >= s.max {
			s.m = map[[32]byte]time.Time{}
		}
	}
	s.m[sum] = now
}

func (s *goodSet) has(sum [32]byte, now time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, ok := s.m[sum]
	return ok && now.Sub(t) < s.ttl
}

func (s *goodSet) remove(sum [32]byte) {
	s.mu.Lock()
	delete(s.m, sum)
	s.mu.Unlock()
}
