package session

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// IDPrefix starts every session id IDManager issues (the same prefix
// mcp-go's own managers use).
const IDPrefix = "mcp-session-"

// DefaultTTL is how long a session lives without AddTools refreshing it.
const DefaultTTL = 24 * time.Hour

// IDManager implements mcp-go's server.SessionIdManager over a Store, so
// that any gateway instance can validate and terminate a session another
// instance started:
//
//	server.NewStreamableHTTPServer(mcpServer, server.WithSessionIdManager(session.NewIDManager(store, ttl)))
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

// Generate creates a session record and returns its id.
func (m *IDManager) Generate() string {
	id := NewID()
	ctx, cancel := m.ctx()
	defer cancel()
	if err := m.Store.Create(ctx, id, m.TTL); err != nil {
		m.storeError(id, fmt.Errorf("create session %s: %w", id, err))
	}
	return id
}

// Validate returns an error (mcp-go answers 404 "Invalid session ID") for a
// malformed id and for a session that is unknown, expired or terminated;
// the store cannot tell a terminated session from one that never existed,
// and both make the client start over.
func (m *IDManager) Validate(sessionID string) (isTerminated bool, err error) {
	if !ValidID(sessionID) {
		return false, fmt.Errorf("invalid session id %q", sessionID)
	}
	ctx, cancel := m.ctx()
	defer cancel()
	ok, err := m.Store.Exists(ctx, sessionID)
	if err != nil {
		err = fmt.Errorf("look up session %s: %w", sessionID, err)
		m.storeError(sessionID, err)
		return false, err
	}
	if !ok {
		return false, fmt.Errorf("session %s: %w", sessionID, ErrNotFound)
	}
	return false, nil
}

// Terminate deletes the session. Clients may always terminate their own
// session, so isNotAllowed is always false.
func (m *IDManager) Terminate(sessionID string) (isNotAllowed bool, err error) {
	if !ValidID(sessionID) {
		return false, fmt.Errorf("invalid session id %q", sessionID)
	}
	ctx, cancel := m.ctx()
	defer cancel()
	if err := m.Store.Delete(ctx, sessionID); err != nil {
		err = fmt.Errorf("delete session %s: %w", sessionID, err)
		m.storeError(sessionID, err)
		return false, err
	}
	return false, nil
}
