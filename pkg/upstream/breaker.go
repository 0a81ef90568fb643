package upstream

import (
	"errors"
	"fmt"
	"sync"
	"time"
)

// A breaker fails calls to a server that is known to be down at once,
// instead of letting each one wait for the connect timeout, and lets one
// probe call through after a back-off so that a server that came back is
// used again without waiting for the next health check.
//
// A server is down when its last breakerThreshold calls failed with
// ErrUnavailable (it could not be started or reached, or its connection
// was lost), or when the health view (Manager.SetHealthView) says so and
// no call succeeded since.
type breaker struct {
	mu        sync.Mutex
	fails     int       // consecutive ErrUnavailable failures
	downSince time.Time // first failure of the current run of failures
	reason    string    // the last failure, for the error
	lastOK    time.Time // last call that got an answer
	retryAt   time.Time // the next probe is let through from then
	backoff   time.Duration
	probing   bool
}

const (
	breakerThreshold  = 2
	breakerMinBackoff = 2 * time.Second
	breakerMaxBackoff = time.Minute
)

// HealthView tells whether a server was found down by a health check,
// since when and why. It is consulted on every call; it must be fast.
type HealthView func(id string) (down bool, since time.Time, reason string)

// errServerDown is the kind of a call refused by the breaker.
var errServerDown = errors.New("the server is down")

// admit reports whether a call may go to the server now (probe: it is the
// one call let through while the server is down), or the error to answer
// at once.
func (b *breaker) admit(now time.Time, hint HealthView, id string) (probe bool, err error) {
	var hDown bool
	var hSince time.Time
	var hReason string
	if hint != nil {
		hDown, hSince, hReason = hint(id)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	hintDown := hDown && !hSince.IsZero() && hSince.After(b.lastOK)
	if b.fails < breakerThreshold && !hintDown {
		return false, nil
	}
	since, reason := b.downSince, b.reason
	if hintDown && (since.IsZero() || hSince.Before(since)) {
		since = hSince
		if reason == "" {
			reason = hReason
		}
	}
	if b.retryAt.IsZero() {
		b.backoff = breakerMinBackoff
		// Known down from the health view only (no failure seen here):
		// the probe comes a back-off after this instance learnt it, not
		// after the health check first saw it down, or every new instance
		// (a Lambda cold start) would send its first call to the server
		// and wait the connect timeout.
		from := since
		if b.fails < breakerThreshold {
			from = now
		}
		b.retryAt = from.Add(b.backoff)
	}
	if b.probing || now.Before(b.retryAt) {
		next := b.retryAt
		if b.probing {
			next = now.Add(b.backoff)
		}
		return false, &problem{kind: ErrUnavailable, cause: errServerDown, predicate: true,
			msg: fmt.Sprintf("was not sent: the server is down since %s (%s); one call is let through again from %s",
				since.UTC().Format(time.RFC3339), shortReason(reason), next.UTC().Format(time.RFC3339))}
	}
	b.probing = true
	return true, nil
}

// done records the outcome of a call admit let through. An answer of any
// kind (a result, a tool error, a JSON-RPC error, even an invalid or
// oversized one) means the server is up; ErrUnavailable counts towards
// down; anything else (a timeout, the caller's cancellation) says nothing
// about the server.
func (b *breaker) done(now time.Time, probe bool, err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if probe {
		b.probing = false
	}
	var rpc *RPCError
	switch {
	case err == nil, errors.As(err, &rpc), errors.Is(err, ErrInvalidResponse), errors.Is(err, ErrResultTooLarge):
		b.fails, b.downSince, b.reason, b.retryAt, b.backoff = 0, time.Time{}, "", time.Time{}, 0
		b.lastOK = now
	case errors.Is(err, ErrUnavailable):
		b.fails++
		b.reason = err.Error()
		if b.downSince.IsZero() {
			b.downSince = now
		}
		if b.fails >= breakerThreshold || probe {
			b.backoff = min(max(2*b.backoff, breakerMinBackoff), breakerMaxBackoff)
			b.retryAt = now.Add(b.backoff)
		}
	}
}

// shortReason keeps an error readable in one line.
func shortReason(s string) string {
	if s == "" {
		return "health check failed"
	}
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// SetHealthView makes calls consult view: a server it reports down is
// answered at once (one call is let through after a back-off). Call it
// before serving.
func (m *Manager) SetHealthView(view HealthView) {
	m.mu.Lock()
	m.health = view
	m.mu.Unlock()
}

func (m *Manager) healthView() HealthView {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.health
}
