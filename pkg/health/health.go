// Package health probes upstream servers and tracks which are up, so that
// retrieval can withhold the tools of a server that is down until it
// recovers.
package health

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"golang.org/x/sync/errgroup"

	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// Prober pings upstreams (upstream.Manager).
type Prober interface {
	Servers() []string
	Ping(ctx context.Context, id string) error
}

// Status is the last probe result of one server.
type Status struct {
	Up        bool          `json:"up"`
	CheckedAt time.Time     `json:"checked_at"`
	Error     string        `json:"error,omitempty"`
	Latency   time.Duration `json:"latency_ns"`
	// DownSince is when the server was first seen down in the current run
	// of failed checks (zero while up).
	DownSince time.Time `json:"down_since,omitzero"`
}

// ProbeAll pings every server concurrently (at most parallel at once), each
// within timeout.
func ProbeAll(ctx context.Context, p Prober, timeout time.Duration, parallel int) (out map[string]Status) {
	ctx, span := tracing.Start(ctx, "health probes")
	defer func() {
		if span.IsRecording() {
			down := 0
			for _, st := range out {
				if !st.Up {
					down++
				}
			}
			span.SetAttributes(attribute.Int("toolrag.health.servers", len(out)), attribute.Int("toolrag.health.down", down))
		}
		span.End()
	}()
	if parallel <= 0 {
		parallel = 16
	}
	servers := p.Servers()
	out = make(map[string]Status, len(servers))
	var mu sync.Mutex
	var g errgroup.Group // a server down is a status, not an error: it stops no other probe
	g.SetLimit(parallel)
	for _, id := range servers {
		g.Go(func() error {
			pctx, cancel := context.WithTimeout(ctx, timeout)
			defer cancel()
			start := time.Now()
			err := p.Ping(pctx, id)
			st := Status{Up: err == nil, CheckedAt: time.Now().UTC(), Latency: time.Since(start)}
			if err != nil {
				st.Error = err.Error()
			}
			mu.Lock()
			out[id] = st
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	return out
}

// Tracker holds the latest status per server. A server never probed counts
// as up.
type Tracker struct {
	mu sync.RWMutex
	m  map[string]Status
}

// NewTracker returns an empty tracker.
func NewTracker() *Tracker { return &Tracker{m: map[string]Status{}} }

// Up reports whether the server is up (or unknown).
func (t *Tracker) Up(server string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok := t.m[server]
	return !ok || st.Up
}

// Replace sets all statuses at once (servers absent from m are forgotten).
// A server down before and still down keeps its DownSince.
func (t *Tracker) Replace(m map[string]Status) {
	cp := make(map[string]Status, len(m))
	t.mu.Lock()
	defer t.mu.Unlock()
	for k, v := range m {
		switch old, ok := t.m[k]; {
		case v.Up:
			v.DownSince = time.Time{}
		case ok && !old.Up && !old.DownSince.IsZero() && (v.DownSince.IsZero() || old.DownSince.Before(v.DownSince)):
			v.DownSince = old.DownSince
		case v.DownSince.IsZero():
			v.DownSince = v.CheckedAt
		}
		cp[k] = v
	}
	t.m = cp
}

// Status returns the last status of a server; ok is false when it was
// never checked.
func (t *Tracker) Status(server string) (st Status, ok bool) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	st, ok = t.m[server]
	return st, ok
}

// DownView reports whether a server was found down, since when and why,
// for upstream.Manager.SetHealthView.
func (t *Tracker) DownView(server string) (down bool, since time.Time, reason string) {
	st, ok := t.Status(server)
	if !ok || st.Up {
		return false, time.Time{}, ""
	}
	return true, st.DownSince, st.Error
}

// Snapshot returns a copy of all statuses.
func (t *Tracker) Snapshot() map[string]Status {
	t.mu.RLock()
	defer t.mu.RUnlock()
	cp := make(map[string]Status, len(t.m))
	for k, v := range t.m {
		cp[k] = v
	}
	return cp
}

// Down returns the ids of servers that are down, sorted.
func (t *Tracker) Down() []string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	var ids []string
	for id, st := range t.m {
		if !st.Up {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

// Run probes every interval until ctx ends. onChange is called (if set)
// after a probe round in which some server went up or down.
func (t *Tracker) Run(ctx context.Context, p Prober, interval, timeout time.Duration, onChange func(down []string)) {
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		before := t.Down()
		t.Replace(ProbeAll(ctx, p, timeout, 16))
		if after := t.Down(); onChange != nil && !equal(before, after) {
			onChange(after)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// Recorder keeps each server's last probe result where other processes
// read it (the registry table on AWS). A server that is gone from the
// store by the time its result is recorded is not an error.
type Recorder interface {
	RecordHealth(ctx context.Context, id string, st Status) error
}

// Report is what one probe round found.
type Report struct {
	Up       []string          `json:"up"`
	Down     map[string]string `json:"down,omitempty"` // server → error
	Duration time.Duration     `json:"duration_ns"`
}

// ProbeAndRecord probes every server of p (see ProbeAll) and records each
// result in rec, in server order. A failed record does not stop the
// others; the failures are returned together.
func ProbeAndRecord(ctx context.Context, p Prober, rec Recorder, timeout time.Duration, parallel int) (Report, error) {
	start := time.Now()
	rep := Report{Up: []string{}, Down: map[string]string{}}
	results := ProbeAll(ctx, p, timeout, parallel)
	ids := make([]string, 0, len(results))
	for id := range results {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var errs []error
	for _, id := range ids {
		st := results[id]
		if st.Up {
			rep.Up = append(rep.Up, id)
		} else {
			rep.Down[id] = st.Error
		}
		if err := rec.RecordHealth(ctx, id, st); err != nil {
			errs = append(errs, err)
		}
	}
	rep.Duration = time.Since(start)
	return rep, errors.Join(errs...)
}
