package testenv

import "sync/atomic"

// InFlight counts the holders of something at once (requests a fake
// server is answering, probes running) and remembers the most there were:
// the figure a test of a concurrency bound compares with the bound. Its
// zero value is ready; it is safe for concurrent use.
type InFlight struct {
	now, most atomic.Int32
}

// Enter counts one more holder until the returned leave is called.
func (f *InFlight) Enter() (leave func()) {
	n := f.now.Add(1)
	for m := f.most.Load(); n > m && !f.most.CompareAndSwap(m, n); m = f.most.Load() {
	}
	return func() { f.now.Add(-1) }
}

// Max returns the most holders there were at once since the last Reset.
func (f *InFlight) Max() int32 { return f.most.Load() }

// Reset forgets the maximum (for the next case of a table).
func (f *InFlight) Reset() { f.most.Store(0) }
