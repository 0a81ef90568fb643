package loadtest

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ConnStats counts a server's connections by how they ended.
type ConnStats struct {
	Accepted int `json:"accepted"`
	// ClosedNew were closed before carrying a request: the client dialed
	// them and never used them, or the server gave up waiting.
	ClosedNew    int `json:"closed_new"`
	ClosedIdle   int `json:"closed_idle"`   // closed between requests
	ClosedActive int `json:"closed_active"` // closed with a request in flight or just answered
}

// connTracker follows http.Server.ConnState.
type connTracker struct {
	mu    sync.Mutex
	state map[net.Conn]http.ConnState
	stats ConnStats
}

func (t *connTracker) observe(c net.Conn, s http.ConnState) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.state == nil {
		t.state = map[net.Conn]http.ConnState{}
	}
	switch s {
	case http.StateNew:
		t.stats.Accepted++
	case http.StateClosed, http.StateHijacked:
		switch t.state[c] {
		case http.StateNew:
			t.stats.ClosedNew++
		case http.StateIdle:
			t.stats.ClosedIdle++
		default:
			t.stats.ClosedActive++
		}
		delete(t.state, c)
		return
	}
	t.state[c] = s
}

func (t *connTracker) snapshot() ConnStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.stats
}

// lineLog is an io.Writer for a log.Logger that keeps the first lines.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	n     int
}

func (l *lineLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.n++
	if len(l.lines) < 10 {
		l.lines = append(l.lines, strings.TrimRight(string(p), "\n"))
	}
	return len(p), nil
}

func (l *lineLog) snapshot() ([]string, int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...), l.n
}

// connTracing is a client transport that names, in the error of a failed
// request, the connection the request went out on: fresh or reused, how
// long it sat idle in the pool, and whether the request was written and
// any response byte came back.
type connTracing struct{ base http.RoundTripper }

func (t connTracing) RoundTrip(req *http.Request) (*http.Response, error) {
	var (
		info      httptrace.GotConnInfo
		got       atomic.Bool
		wrote     atomic.Bool
		firstByte atomic.Bool
	)
	trace := &httptrace.ClientTrace{
		GotConn:              func(i httptrace.GotConnInfo) { info = i; got.Store(true) },
		WroteRequest:         func(httptrace.WroteRequestInfo) { wrote.Store(true) },
		GotFirstResponseByte: func() { firstByte.Store(true) },
	}
	resp, err := t.base.RoundTrip(req.WithContext(httptrace.WithClientTrace(req.Context(), trace)))
	if err == nil {
		return resp, nil
	}
	if !got.Load() {
		return nil, fmt.Errorf("%w (no connection)", err)
	}
	kind := "fresh"
	if info.Reused {
		kind = "reused"
	}
	idle := "never idle"
	if info.WasIdle {
		idle = fmt.Sprintf("idle %s in the pool", info.IdleTime.Round(time.Millisecond))
	}
	return nil, fmt.Errorf("%w (%s connection %s, %s; request written: %v, response byte: %v)",
		err, kind, info.Conn.LocalAddr(), idle, wrote.Load(), firstByte.Load())
}
