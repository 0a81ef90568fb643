package testenv

import (
	"bytes"
	"sync"
)

// Buffer is a bytes.Buffer that goroutines may write to concurrently: a
// sink for a logger or a child process's output that a test then reads.
// With Max > 0, writes past Max bytes are dropped (a chatty process cannot
// fill memory).
type Buffer struct {
	Max int

	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Max > 0 && s.b.Len() > s.Max {
		return len(p), nil
	}
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
