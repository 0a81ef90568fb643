package config

import (
	"context"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

func TestFileSetChanged(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.yaml"), filepath.Join(dir, "b.yaml")
	os.WriteFile(a, []byte("one"), 0o600)
	f := NewFileSet(a, b) // b does not exist yet
	steps := []struct {
		do   func()
		want bool
	}{
		{func() {}, false},
		{func() { os.WriteFile(a, []byte("two"), 0o600) }, true},
		{func() {}, false}, // reported once
		{func() { os.WriteFile(b, nil, 0o600) }, false},                         // an empty file reads like a missing one
		{func() { os.WriteFile(b, []byte("x"), 0o600) }, true},                  // created with content
		{func() { os.Remove(a); os.WriteFile(a, []byte("two"), 0o600) }, false}, // same content again
	}
	for i, s := range steps {
		s.do()
		if got := f.Changed(); got != s.want {
			t.Errorf("step %d: Changed() = %v, want %v", i, got, s.want)
		}
	}
}

// Watch checks on its timer and at once on SIGHUP, and stops with ctx.
func TestWatch(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	checks, hups := make(chan struct{}, 10), make(chan struct{}, 10)
	done := make(chan struct{})
	go func() {
		Watch(ctx, 0, func() { hups <- struct{}{} }, func() { checks <- struct{}{} })
		close(done)
	}()
	// The test's own handler keeps a SIGHUP sent before Watch installs
	// its one from ending the process; it is sent until Watch sees one.
	mine := make(chan os.Signal, 10)
	signal.Notify(mine, syscall.SIGHUP)
	defer signal.Stop(mine)
	deadline := time.After(10 * time.Second)
	for seen := false; !seen; {
		syscall.Kill(os.Getpid(), syscall.SIGHUP)
		select {
		case <-checks:
			seen = true
		case <-time.After(100 * time.Millisecond):
		case <-deadline:
			t.Fatal("SIGHUP did not trigger a check")
		}
	}
	if len(hups) == 0 { // onHUP runs before the check it causes
		t.Error("the check after SIGHUP came without onHUP")
	}
	cancel()
	<-done
}
