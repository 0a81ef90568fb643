// LogWriter is the process's log output: a buffered writer that takes log lines off the caller's path and writes them to the
// underlying writer (stderr) from one goroutine, in order, batched.
//
// A request used to pay a write system call for its audit line while it
// waited (docs/benchmarks.md, issue 16); now it pays a copy into memory.
// Nothing is dropped: when the buffer is full, Write waits for the flusher
// instead of discarding, and an error of the underlying writer is returned
// by the Writes and the Close that follow it. Close (on shutdown) writes
// whatever is pending; after it, writes go straight through. What a crash
// that ends the process at once (SIGKILL, a fatal runtime error) can lose
// is the lines of the last FlushDelay.

package config

import (
	"errors"
	"io"
	"sync"
	"time"
)

// LogWriterConfig configures a LogWriter.
type LogWriterConfig struct {
	// Out receives the lines (typically os.Stderr).
	Out io.Writer
	// FlushDelay is the least time between two writes of the flusher: a
	// line after a quiet spell is written at once, lines that follow within
	// FlushDelay wait for the next write, which carries them all (0: 5 ms;
	// negative: write whenever the flusher wakes up).
	FlushDelay time.Duration
	// MaxPending is the most bytes held in memory; Write waits while the
	// buffer is full (0: 1 MiB).
	MaxPending int
}

// LogWriter is an asynchronous buffered io.Writer. Each Write is copied whole
// into the buffer, so the lines of concurrent writers never interleave.
type LogWriter struct {
	out   io.Writer
	delay time.Duration
	max   int

	writeMu sync.Mutex // held while a batch is taken and written: keeps order

	mu      sync.Mutex
	space   *sync.Cond // signalled when the buffer was written out
	pending []byte
	spare   []byte
	err     error // first error of out: returned from then on
	closed  bool

	wake    chan struct{}
	closing chan struct{} // closed by Close: the flusher stops waiting
	done    chan struct{}
}

// NewLogWriter starts a Writer's flusher; Close stops it.
func NewLogWriter(cfg LogWriterConfig) *LogWriter {
	w := &LogWriter{out: cfg.Out, delay: cfg.FlushDelay, max: cfg.MaxPending,
		wake: make(chan struct{}, 1), closing: make(chan struct{}), done: make(chan struct{})}
	if w.delay == 0 {
		w.delay = 5 * time.Millisecond
	}
	if w.max <= 0 {
		w.max = 1 << 20
	}
	w.space = sync.NewCond(&w.mu)
	go w.flusher()
	return w
}

// ErrLogWriterClosed is not returned by Write: after Close, lines are written
// synchronously. It is what a second Close returns.
var ErrLogWriterClosed = errors.New("logwriter: already closed")

// Write queues a copy of p. It returns an error only when an earlier write
// of the underlying writer failed (then p is not queued).
func (w *LogWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	for !w.closed && w.err == nil && len(w.pending) > 0 && len(w.pending)+len(p) > w.max {
		w.kick()
		w.space.Wait()
	}
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return 0, err
	}
	if w.closed {
		w.mu.Unlock()
		w.writeMu.Lock()
		defer w.writeMu.Unlock()
		return w.out.Write(p)
	}
	first := len(w.pending) == 0
	w.pending = append(w.pending, p...)
	w.mu.Unlock()
	if first {
		w.kick()
	}
	return len(p), nil
}

func (w *LogWriter) kick() {
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// flusher writes the pending lines, a batch at a time, until Close.
func (w *LogWriter) flusher() {
	defer close(w.done)
	var timer *time.Timer
	var last time.Time // when the last batch was written
	for {
		select {
		case <-w.wake:
		case <-w.closing:
			return
		}
		// A line after a quiet spell goes out at once; while lines keep
		// coming, at most one write per FlushDelay carries them all.
		if wait := w.delay - time.Since(last); w.delay > 0 && wait > 0 {
			if timer == nil {
				timer = time.NewTimer(wait)
			} else {
				timer.Reset(wait)
			}
			select {
			case <-timer.C:
			case <-w.closing:
				return // Close writes what is pending
			}
		}
		w.Flush()
		last = time.Now()
	}
}

// Flush writes what is pending now and returns the underlying writer's
// error, if any.
func (w *LogWriter) Flush() error {
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	w.mu.Lock()
	batch := w.pending
	w.pending = w.spare[:0]
	err := w.err
	w.mu.Unlock()
	if len(batch) > 0 && err == nil {
		_, err = w.out.Write(batch)
	}
	w.mu.Lock()
	if cap(batch) <= 4*w.max { // keep the buffer unless a huge line grew it
		w.spare = batch[:0]
	}
	if err != nil && w.err == nil {
		w.err = err
	}
	w.space.Broadcast()
	w.mu.Unlock()
	return err
}

// Close writes what is pending and stops the flusher; later writes go
// straight to the underlying writer. It returns the first error the
// underlying writer returned, if any.
func (w *LogWriter) Close() error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return ErrLogWriterClosed
	}
	w.closed = true
	w.space.Broadcast()
	w.mu.Unlock()
	close(w.closing)
	<-w.done
	return w.Flush()
}
