// Package session keeps the state of legacy-protocol MCP sessions that must
// survive across gateway instances: whether a session id is live and which
// tools find_tools has registered for it (strict clients only call tools
// they were told about through tools/list).
//
// Store has an in-memory implementation here (one process) and a DynamoDB
// implementation in pkg/aws/dynamo (many Lambda instances). IDManager adapts any
// Store to mcp-go's server.SessionIdManager, so a session started on one
// instance can continue on another.
package session

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/internal/redact"
)

// ErrNotFound is returned by AddTools for a session that does not exist,
// has expired or was deleted.
var ErrNotFound = errors.New("session not found")

// Store persists sessions. Every implementation must pass sessiontest.Run.
type Store interface {
	// Create records a new live session, owned by principal, that
	// expires after ttl.
	Create(ctx context.Context, id, principal string, ttl time.Duration) error
	// Exists reports whether the session is live: false when it is
	// missing, expired or deleted.
	Exists(ctx context.Context, id string) (bool, error)
	// Owner returns the principal that created a live session; live is
	// false (and principal "") when the session is missing, expired or
	// deleted.
	Owner(ctx context.Context, id string) (principal string, live bool, err error)
	// Delete removes the session. Deleting a missing session is not an error.
	Delete(ctx context.Context, id string) error
	// AddTools adds tool ids to the session's set (set union) and restarts
	// its expiry with the ttl it was created with. It returns ErrNotFound
	// when the session is not live; it never revives a deleted session.
	AddTools(ctx context.Context, id string, toolIDs []string) error
	// Tools returns the session's tool ids, sorted; empty for an unknown
	// or expired session.
	Tools(ctx context.Context, id string) ([]string, error)
}

// Ref is what logs and error messages say instead of a session id: a
// session id is a bearer credential of its session (together with its
// owner's key), so it is never written out; Ref is a short hash of it
// that lets an operator correlate lines.
func Ref(id string) string { return redact.SessionRef(id) }

// CheckCreate validates the arguments of Store.Create.
func CheckCreate(id string, ttl time.Duration) error {
	if id == "" {
		return errors.New("session id is empty")
	}
	if len(id) > 1024 {
		return fmt.Errorf("session id is %d bytes long, at most 1024 allowed", len(id))
	}
	if ttl <= 0 {
		return fmt.Errorf("session ttl %v must be positive", ttl)
	}
	return nil
}

// Memory is an in-memory Store with expiry, for a single gateway process.
// Expired sessions are dropped lazily and by Sweep.
type Memory struct {
	// Now is the clock; tests replace it. Defaults to time.Now.
	Now func() time.Time

	mu       sync.Mutex
	sessions map[string]*memSession
	tasks    map[string]Task
	cancels  map[string]time.Time // cancel records (PutCancel)
}

type memSession struct {
	owner   string
	ttl     time.Duration
	expires time.Time
	tools   map[string]struct{}
}

// NewMemory returns an empty in-memory store.
func NewMemory() *Memory {
	return &Memory{Now: time.Now, sessions: map[string]*memSession{}}
}

var _ Store = (*Memory)(nil)

func (m *Memory) now() time.Time {
	if m.Now == nil {
		return time.Now()
	}
	return m.Now()
}

// live returns the session if it exists and has not expired; the caller
// holds m.mu.
func (m *Memory) live(id string) *memSession {
	s, ok := m.sessions[id]
	if !ok {
		return nil
	}
	if !m.now().Before(s.expires) {
		delete(m.sessions, id)
		return nil
	}
	return s
}

// Create implements Store. Creating an id that is already live is an error.
func (m *Memory) Create(_ context.Context, id, principal string, ttl time.Duration) error {
	if err := CheckCreate(id, ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.live(id) != nil {
		return fmt.Errorf("session %s already exists", Ref(id))
	}
	m.sessions[id] = &memSession{owner: principal, ttl: ttl, expires: m.now().Add(ttl), tools: map[string]struct{}{}}
	return nil
}

// Exists implements Store.
func (m *Memory) Exists(_ context.Context, id string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.live(id) != nil, nil
}

// Owner implements Store.
func (m *Memory) Owner(_ context.Context, id string) (string, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if s := m.live(id); s != nil {
		return s.owner, true, nil
	}
	return "", false, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.sessions, id)
	return nil
}

// OwnerDeleter is implemented by stores that can end every session of a
// principal at once (a revoked credential's sessions).
type OwnerDeleter interface {
	DeleteOwner(ctx context.Context, principal string) (int, error)
}

// DeleteOwner implements OwnerDeleter.
func (m *Memory) DeleteOwner(_ context.Context, principal string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for id, s := range m.sessions {
		if s.owner == principal {
			delete(m.sessions, id)
			n++
		}
	}
	return n, nil
}

// AddTools implements Store.
func (m *Memory) AddTools(_ context.Context, id string, toolIDs []string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.live(id)
	if s == nil {
		return fmt.Errorf("session %s: %w", Ref(id), ErrNotFound)
	}
	for _, t := range toolIDs {
		if t != "" {
			s.tools[t] = struct{}{}
		}
	}
	s.expires = m.now().Add(s.ttl)
	return nil
}

// Tools implements Store.
func (m *Memory) Tools(_ context.Context, id string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.live(id)
	if s == nil {
		return []string{}, nil
	}
	out := make([]string, 0, len(s.tools))
	for t := range s.tools {
		out = append(out, t)
	}
	sort.Strings(out)
	return out, nil
}

// Sweep drops expired sessions and returns how many it dropped. Call it
// now and then in a long-running process; reads never see expired sessions
// either way.
func (m *Memory) Sweep() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	now := m.now()
	for id, s := range m.sessions {
		if !now.Before(s.expires) {
			delete(m.sessions, id)
			n++
		}
	}
	return n
}

// Len returns the number of sessions held, live or not yet swept.
func (m *Memory) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sessions)
}
