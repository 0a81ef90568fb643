package session

import (
	"context"
	"errors"
	"sort"
	"time"
)

// Task is the record of a task a client started with a task-augmented
// tools/call (MCP tasks): whose it is, where it runs, and, for a task the
// gateway runs itself, its state and result. Every task request is routed
// by it: the upstream's own task id never reaches the client.
type Task struct {
	ID        string `json:"id"`
	Principal string `json:"principal"`
	Server    string `json:"server"` // upstream server id
	Tool      string `json:"tool"`   // catalog tool id
	Name      string `json:"name"`   // the tool's name at its server (the policy's rule)
	// Upstream is the upstream's task id; "" when the gateway runs the
	// call itself.
	Upstream string `json:"upstream,omitempty"`
	// Ext says the task was made for a client of the 2026-07-28 tasks
	// extension, which is answered in that extension's shapes.
	Ext bool `json:"ext,omitempty"`
	// Status is working, input_required, completed, failed or cancelled;
	// Message the status message (gateway-run tasks).
	Status  string `json:"status"`
	Message string `json:"message,omitempty"`
	// Result is the tools/call result of a gateway-run task that ended
	// (JSON); ResultRef names where it is stored instead when it is kept
	// outside the record (an S3 key on AWS).
	Result    []byte `json:"result,omitempty"`
	ResultRef string `json:"result_ref,omitempty"`
	// TTLMs and PollMs are what the client is told (milliseconds).
	TTLMs   int64     `json:"ttl_ms"`
	PollMs  int64     `json:"poll_ms"`
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`
	Expires time.Time `json:"expires"`
}

// Ended reports whether the task's status is terminal.
func (t Task) Ended() bool {
	return t.Status == "completed" || t.Status == "failed" || t.Status == "cancelled"
}

// TaskStore keeps task records until they expire.
type TaskStore interface {
	// PutTask creates or replaces a task record.
	PutTask(ctx context.Context, t Task) error
	// UpdateTask replaces a record unless it has ended (a cancelled task
	// stays cancelled); it returns ErrTaskEnded then.
	UpdateTask(ctx context.Context, t Task) error
	// GetTask returns a live record; ok is false when it is missing or
	// expired.
	GetTask(ctx context.Context, id string) (t Task, ok bool, err error)
	// ListTasks returns the live records of principal, newest first.
	ListTasks(ctx context.Context, principal string) ([]Task, error)
}

// ErrTaskEnded is UpdateTask's answer for a task that has already ended.
var ErrTaskEnded = errors.New("the task has already ended")

var _ TaskStore = (*Memory)(nil)

// PutTask implements TaskStore.
func (m *Memory) PutTask(_ context.Context, t Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.tasks == nil {
		m.tasks = map[string]Task{}
	}
	m.tasks[t.ID] = t
	return nil
}

// UpdateTask implements TaskStore.
func (m *Memory) UpdateTask(_ context.Context, t Task) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.tasks[t.ID]; ok && old.Ended() {
		return ErrTaskEnded
	}
	if m.tasks == nil {
		m.tasks = map[string]Task{}
	}
	m.tasks[t.ID] = t
	return nil
}

// GetTask implements TaskStore.
func (m *Memory) GetTask(_ context.Context, id string) (Task, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.tasks[id]
	if !ok {
		return Task{}, false, nil
	}
	if !m.now().Before(t.Expires) {
		delete(m.tasks, id)
		return Task{}, false, nil
	}
	return t, true, nil
}

// ListTasks implements TaskStore.
func (m *Memory) ListTasks(_ context.Context, principal string) ([]Task, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.now()
	var out []Task
	for id, t := range m.tasks {
		if !now.Before(t.Expires) {
			delete(m.tasks, id)
			continue
		}
		if t.Principal == principal {
			out = append(out, t)
		}
	}
	SortTasks(out)
	return out, nil
}

// SortTasks orders tasks newest first (then by id).
func SortTasks(ts []Task) {
	sort.Slice(ts, func(i, j int) bool {
		if !ts[i].Created.Equal(ts[j].Created) {
			return ts[i].Created.After(ts[j].Created)
		}
		return ts[i].ID < ts[j].ID
	})
}

// PutCancel records a cancellation (gateway.Cancels) until expires.
func (m *Memory) PutCancel(_ context.Context, key string, expires time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cancels == nil {
		m.cancels = map[string]time.Time{}
	}
	m.cancels[key] = expires
	return nil
}

// Cancelled reports whether a live cancel record has key.
func (m *Memory) Cancelled(_ context.Context, key string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	exp, ok := m.cancels[key]
	if ok && !m.now().Before(exp) {
		delete(m.cancels, key)
		return false, nil
	}
	return ok, nil
}
