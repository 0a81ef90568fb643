package session

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/server"
)

// IDPrefix starts every session id IDManager issues (the same prefix
// mcp-go's own managers use).
const IDPrefix = "mcp-session-"

// DefaultTTL is how long a session lives without AddTools refreshing it.
const DefaultTTL = 24 * time.Hour

// IDManager issues mcp-go server.SessionIdManagers over a Store, one per
// principal (For), so that any gateway instance can validate and terminate
// a session another instance started, and only for the principal that
// started it:
//
//	ids := session.NewIDManager(store, ttl)
//	... server.WithSessionIdManagerResolver(resolver using ids.For(principalOf(r)))
//
// The SessionIdManager methods take no context and Generate returns no
// error, so each store call runs under Timeout, and every store error is
// reported to OnError and remembered for Guard, which answers that request
// 503 with Retry-After (the client retries) instead of the 404 mcp-go
// writes for any Validate error (the client would drop its session).
type IDManager struct {
	Store   Store
	TTL     time.Duration
	Timeout time.Duration // per store call; default 5s
	// OnError, when set, receives every store error (the SessionIdManager
	// interface cannot return them all; Guard answers them 503).
	OnError func(error)

	failures storeFailures
}

// storeError records a store error for Guard and reports it.
func (m *IDManager) storeError(id string, err error) {
	m.failures.note(id, err)
	if m.OnError != nil {
		m.OnError(err)
	}
}

// NewIDManager returns an IDManager over store; ttl <= 0 means DefaultTTL.
func NewIDManager(store Store, ttl time.Duration) *IDManager {
	if ttl <= 0 {
		ttl = DefaultTTL
	}
	return &IDManager{Store: store, TTL: ttl, Timeout: 5 * time.Second}
}

func (m *IDManager) ctx() (context.Context, context.CancelFunc) {
	d := m.Timeout
	if d <= 0 {
		d = 5 * time.Second
	}
	return context.WithTimeout(context.Background(), d)
}

// NewID returns a fresh session id: IDPrefix followed by 128 random bits
// from crypto/rand in hex.
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails: Go crashes the program if the OS has no randomness
	return IDPrefix + hex.EncodeToString(b[:])
}

// ValidID reports whether id has the shape IDManager issues.
func ValidID(id string) bool {
	rest, ok := strings.CutPrefix(id, IDPrefix)
	if !ok || len(rest) != 32 {
		return false
	}
	_, err := hex.DecodeString(rest)
	return err == nil
}

// For returns the session id manager of one principal (the abstract
// identity that authenticated the request: an API key, later an OAuth
// subject). Generate records the principal as the session's owner;
// Validate and Terminate answer a session that another principal owns
// exactly like an unknown one, so a session id is worth nothing without
// its owner's credentials.
func (m *IDManager) For(principal string) server.SessionIdManager {
	return &boundIDManager{m: m, principal: principal}
}

// Check returns nil when id is a live session owned by principal and an
// error wrapping ErrNotFound otherwise (malformed, unknown, expired,
// terminated or another principal's session alike), or the store's error.
func (m *IDManager) Check(ctx context.Context, principal, id string) error {
	if !ValidID(id) {
		return fmt.Errorf("malformed session id: %w", ErrNotFound)
	}
	owner, live, err := m.Store.Owner(ctx, id)
	if err != nil {
		err = fmt.Errorf("look up session %s: %w", Ref(id), err)
		m.storeError(id, err)
		return err
	}
	if !live || subtle.ConstantTimeCompare([]byte(owner), []byte(principal)) != 1 {
		return fmt.Errorf("session %s: %w", Ref(id), ErrNotFound)
	}
	return nil
}

type boundIDManager struct {
	m         *IDManager
	principal string
}

// Generate creates a session record owned by the principal and returns
// its id.
func (b *boundIDManager) Generate() string {
	id := NewID()
	ctx, cancel := b.m.ctx()
	defer cancel()
	if err := b.m.Store.Create(ctx, id, b.principal, b.m.TTL); err != nil {
		b.m.storeError(id, fmt.Errorf("create session %s: %w", Ref(id), err))
	}
	return id
}

// Validate returns an error (mcp-go answers 404 "Invalid session ID") for a
// malformed id and for a session that is unknown, expired, terminated or
// owned by another principal; the store cannot tell a terminated session
// from one that never existed, and all of them make the client start over.
func (b *boundIDManager) Validate(sessionID string) (isTerminated bool, err error) {
	ctx, cancel := b.m.ctx()
	defer cancel()
	return false, b.m.Check(ctx, b.principal, sessionID)
}

// Terminate deletes the session if the principal owns it. Clients may
// always terminate their own session, so isNotAllowed is always false; a
// session of another principal is an error (as for an unknown one), and
// is left alone.
func (b *boundIDManager) Terminate(sessionID string) (isNotAllowed bool, err error) {
	ctx, cancel := b.m.ctx()
	defer cancel()
	if err := b.m.Check(ctx, b.principal, sessionID); err != nil {
		return false, err
	}
	if err := b.m.Store.Delete(ctx, sessionID); err != nil {
		err = fmt.Errorf("delete session %s: %w", Ref(sessionID), err)
		b.m.storeError(sessionID, err)
		return false, err
	}
	return false, nil
}
