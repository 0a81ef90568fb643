package config

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the flusher and the test, which
// also counts the Write calls it gets.
type lockedBuffer struct {
	mu     sync.Mutex
	b      bytes.Buffer
	writes int
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestOrderAndNoLoss writes numbered lines from several goroutines through
// a buffer far smaller than what they write (so writers wait for the
// flusher) and checks that every line arrives once, whole, and in each
// writer's order.
func TestOrderAndNoLoss(t *testing.T) {
	for _, delay := range []time.Duration{-1, time.Millisecond} {
		t.Run(fmt.Sprint("delay=", delay), func(t *testing.T) {
			var out lockedBuffer
			w := NewLogWriter(LogWriterConfig{Out: &out, FlushDelay: delay, MaxPending: 200})
			const writers, lines = 8, 500
			var wg sync.WaitGroup
			for g := range writers {
				wg.Go(func() {
					for i := range lines {
						if _, err := fmt.Fprintf(w, "writer=%d line=%d %s\n", g, i, strings.Repeat("x", i%50)); err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			next := make([]int, writers)
			got := strings.Split(strings.TrimSuffix(out.String(), "\n"), "\n")
			if len(got) != writers*lines {
				t.Fatalf("%d lines, want %d", len(got), writers*lines)
			}
			for _, l := range got {
				var g, i int
				var pad string
				if _, err := fmt.Sscanf(l, "writer=%d line=%d %s", &g, &i, &pad); err != nil && i%50 != 0 {
					t.Fatalf("mangled line %q: %v", l, err)
				}
				if i != next[g] || len(pad) != i%50 {
					t.Fatalf("writer %d: line %q, want line %d", g, l, next[g])
				}
				next[g]++
			}
		})
	}
}

// gatedWriter blocks every Write until the gate is opened.
type gatedWriter struct {
	gate chan struct{}
	out  lockedBuffer
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	<-g.gate
	return g.out.Write(p)
}

// TestOffTheCallersPath checks that Write returns while the underlying
// writer is stuck, and that Close writes what was pending, batched.
func TestOffTheCallersPath(t *testing.T) {
	g := &gatedWriter{gate: make(chan struct{})}
	w := NewLogWriter(LogWriterConfig{Out: g, FlushDelay: time.Hour})
	for i := range 3 {
		if _, err := fmt.Fprintf(w, "line %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	if got := g.out.String(); got != "" {
		t.Fatalf("written before the flush: %q", got)
	}
	close(g.gate)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := g.out.String(), "line 0\nline 1\nline 2\n"; got != want {
		t.Fatalf("after Close: %q, want %q", got, want)
	}
	// The first line may go out alone (it ends a quiet spell); the two
	// that queued behind it go together.
	if g.out.writes > 2 {
		t.Errorf("%d writes, want the 3 lines in at most 2", g.out.writes)
	}
	// After Close, lines go straight through.
	fmt.Fprintln(w, "late")
	if got := g.out.String(); !strings.HasSuffix(got, "late\n") {
		t.Errorf("a line written after Close is missing: %q", got)
	}
	if err := w.Close(); !errors.Is(err, ErrLogWriterClosed) {
		t.Errorf("second Close: %v, want ErrLogWriterClosed", err)
	}
}

// failingWriter fails every Write.
type failingWriter struct{}

func (failingWriter) Write(p []byte) (int, error) { return 0, errors.New("stderr is gone") }

// TestErrorIsReported checks that a failure of the underlying writer is not
// silent: Flush, the following Writes and Close return it.
func TestErrorIsReported(t *testing.T) {
	w := NewLogWriter(LogWriterConfig{Out: failingWriter{}, FlushDelay: time.Hour})
	if _, err := fmt.Fprintln(w, "first"); err != nil {
		t.Fatalf("the first line is queued: %v", err)
	}
	if err := w.Flush(); err == nil || !strings.Contains(err.Error(), "stderr is gone") {
		t.Fatalf("Flush: %v", err)
	}
	if _, err := fmt.Fprintln(w, "second"); err == nil {
		t.Error("Write after a failed flush returned no error")
	}
	if err := w.Close(); err == nil {
		t.Error("Close after a failed flush returned no error")
	}
}
