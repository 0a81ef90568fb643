package health

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

type fakeUpstreams map[string]error // a probe target per server; real upstreams are covered in pkg/local tests

func (f fakeUpstreams) Servers() []string {
	var s []string
	for k := range f {
		s = append(s, k)
	}
	return s
}

func (f fakeUpstreams) Ping(ctx context.Context, id string) error {
	if id == "hang" {
		<-ctx.Done()
		return ctx.Err()
	}
	return f[id]
}

func TestProbeAllAndTracker(t *testing.T) {
	p := fakeUpstreams{"a": nil, "b": errors.New("connection refused"), "hang": nil}
	st := ProbeAll(context.Background(), p, 50*time.Millisecond, 2)
	if !st["a"].Up || st["b"].Up || st["hang"].Up || st["b"].Error != "connection refused" {
		t.Fatalf("statuses: %+v", st)
	}
	tr := NewTracker()
	if !tr.Up("never-probed") {
		t.Fatal("unknown server must count as up")
	}
	tr.Replace(st)
	if tr.Up("b") || !tr.Up("a") {
		t.Fatal("tracker")
	}
	if d := tr.Down(); len(d) != 2 || d[0] != "b" || d[1] != "hang" {
		t.Fatalf("Down = %v", d)
	}
}

// slowProber answers each ping after a pause, counting the pings in
// flight; the servers named in down fail.
type slowProber struct {
	servers  []string
	down     map[string]bool
	inflight testenv.InFlight
}

func (p *slowProber) Servers() []string { return p.servers }

func (p *slowProber) Ping(ctx context.Context, id string) error {
	defer p.inflight.Enter()()
	select {
	case <-time.After(30 * time.Millisecond):
	case <-ctx.Done():
		return ctx.Err() // cancelled by a sibling's failure: must not happen
	}
	if p.down[id] {
		return errors.New("connection refused")
	}
	return nil
}

// ProbeAll probes at most parallel servers at once, and a server down
// stops no other probe.
func TestProbeAllBoundedAndIndependent(t *testing.T) {
	tests := []struct {
		name     string
		servers  int
		parallel int
		wantMax  int32
	}{
		{"one at a time", 5, 1, 1},
		{"three at a time", 10, 3, 3},
		{"fewer servers than the bound", 2, 8, 2},
		{"default bound of 16", 20, 0, 16},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := &slowProber{down: map[string]bool{"s0": true}}
			for i := range tc.servers {
				p.servers = append(p.servers, fmt.Sprintf("s%d", i))
			}
			st := ProbeAll(context.Background(), p, time.Second, tc.parallel)
			if m := p.inflight.Max(); m != tc.wantMax {
				t.Errorf("%d probes at once, want %d", m, tc.wantMax)
			}
			if len(st) != tc.servers {
				t.Fatalf("%d statuses, want one per server (%d)", len(st), tc.servers)
			}
			for id, s := range st {
				if wantUp := !p.down[id]; s.Up != wantUp {
					t.Errorf("%s: %+v, want up %v (one server down must not cancel the others)", id, s, wantUp)
				}
			}
		})
	}
}

func TestRunReportsChanges(t *testing.T) {
	p := fakeUpstreams{"a": errors.New("down")}
	tr := NewTracker()
	ctx, cancel := context.WithCancel(context.Background())
	changes := make(chan []string, 4)
	go tr.Run(ctx, p, time.Hour, time.Second, func(down []string) { changes <- down })
	got := <-changes
	cancel()
	if len(got) != 1 || got[0] != "a" {
		t.Fatalf("onChange(%v)", got)
	}
}

type recorded map[string]Status

func (r recorded) RecordHealth(_ context.Context, id string, st Status) error {
	if id == "gone-wrong" {
		return errors.New("store unavailable")
	}
	r[id] = st
	return nil
}

// Every result is recorded, in order; a failed record does not stop the
// others and is returned.
func TestProbeAndRecord(t *testing.T) {
	p := fakeUpstreams{"a": nil, "b": errors.New("connection refused"), "gone-wrong": nil}
	rec := recorded{}
	rep, err := ProbeAndRecord(context.Background(), p, rec, time.Second, 2)
	if err == nil || err.Error() != "store unavailable" {
		t.Errorf("error %v, want the failed record", err)
	}
	if len(rep.Up) != 2 || rep.Up[0] != "a" || rep.Up[1] != "gone-wrong" || rep.Down["b"] != "connection refused" {
		t.Errorf("report %+v", rep)
	}
	if !rec["a"].Up || rec["b"].Up || rec["b"].Error != "connection refused" {
		t.Errorf("recorded %+v", rec)
	}
}
