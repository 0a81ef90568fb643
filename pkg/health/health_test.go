package health

import (
	"context"
	"errors"
	"testing"
	"time"
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
