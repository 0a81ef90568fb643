// Package usage keeps per-key and per-server call statistics since the
// process started: calls, errors, rate-limited requests, last seen, and a
// latency histogram from which p50/p99 are read. It is what the operator
// console's usage and servers pages show; it never records arguments,
// results or secrets, only key ids, server ids and outcomes.
package usage

import (
	"math"
	"sort"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Outcomes a call can have (the audit line's vocabulary). Any outcome
// other than OK counts as an error, except RateLimited which is counted
// on its own.
const (
	OK          = "ok"
	RateLimited = "rate_limited"
)

// Bucket bounds of the latency histogram: 48 log-spaced upper bounds from
// 100 µs to about 100 s (each 1.33× the one before), plus +Inf.
var Bounds = func() []time.Duration {
	b := make([]time.Duration, 48)
	v := 100e3 // ns
	for i := range b {
		b[i] = time.Duration(v)
		v *= 1.3335
	}
	return b
}()

// Histogram counts latencies into Bounds (the last slot is +Inf).
type Histogram struct {
	Counts [49]int64
	Total  int64
	Sum    time.Duration
}

func (h *Histogram) observe(d time.Duration) {
	i := sort.Search(len(Bounds), func(i int) bool { return d <= Bounds[i] })
	h.Counts[i]++
	h.Total++
	h.Sum += d
}

// Quantile returns the upper bound of the bucket holding quantile q (0–1),
// 0 when nothing was observed. The answer is within one bucket (±33 %).
func (h *Histogram) Quantile(q float64) time.Duration {
	if h.Total == 0 {
		return 0
	}
	rank := int64(math.Ceil(q * float64(h.Total)))
	if rank < 1 {
		rank = 1
	}
	var seen int64
	for i, c := range h.Counts {
		seen += c
		if seen >= rank {
			if i == len(Bounds) {
				return Bounds[len(Bounds)-1]
			}
			return Bounds[i]
		}
	}
	return Bounds[len(Bounds)-1]
}

// Stats are the counts of one key or server.
type Stats struct {
	Calls       int64
	Errors      int64
	RateLimited int64
	LastSeen    time.Time
	Latency     Histogram
}

// Summary is Stats as the console shows it.
type Summary struct {
	ID          string    `json:"id"`
	Calls       int64     `json:"calls"`
	Errors      int64     `json:"errors"`
	RateLimited int64     `json:"rate_limited"`
	ErrorRate   float64   `json:"error_rate"`
	LastSeen    time.Time `json:"last_seen,omitzero"`
	P50ms       float64   `json:"p50_ms"`
	P99ms       float64   `json:"p99_ms"`
}

func (s *Stats) summary(id string) Summary {
	out := Summary{ID: id, Calls: s.Calls, Errors: s.Errors, RateLimited: s.RateLimited, LastSeen: s.LastSeen,
		P50ms: ms(s.Latency.Quantile(0.5)), P99ms: ms(s.Latency.Quantile(0.99))}
	if s.Calls > 0 {
		out.ErrorRate = float64(s.Errors) / float64(s.Calls)
	}
	return out
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// Recorder collects the statistics. The zero value is not usable; call New.
// At most MaxEntries keys and MaxEntries servers are tracked (ids beyond
// that are counted under "(other)"), so a flood of distinct ids cannot grow
// it without bound.
type Recorder struct {
	mu      sync.Mutex
	keys    map[string]*Stats
	servers map[string]*Stats
	all     Histogram
	started time.Time
	now     func() time.Time
}

// MaxEntries bounds the number of distinct keys and servers tracked.
const MaxEntries = 10000

// Other is the id under which calls beyond MaxEntries distinct ids count.
const Other = "(other)"

// New returns an empty recorder.
func New() *Recorder {
	return &Recorder{keys: map[string]*Stats{}, servers: map[string]*Stats{}, started: time.Now().UTC(), now: time.Now}
}

func entry(m map[string]*Stats, id string) *Stats {
	if s, ok := m[id]; ok {
		return s
	}
	if len(m) >= MaxEntries {
		id = Other
		if s, ok := m[id]; ok {
			return s
		}
	}
	s := &Stats{}
	m[id] = s
	return s
}

// Call records one tool call of key on server with its outcome and
// duration. server may be "" when the tool was unknown.
func (r *Recorder) Call(keyID, server, outcome string, d time.Duration) {
	if r == nil {
		return
	}
	now := r.now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range []*Stats{entry(r.keys, keyID), r.serverEntry(server)} {
		if s == nil {
			continue
		}
		s.LastSeen = now
		if outcome == RateLimited {
			s.RateLimited++
			continue
		}
		s.Calls++
		if outcome != OK {
			s.Errors++
		}
		s.Latency.observe(d)
	}
	if outcome != RateLimited {
		r.all.observe(d)
	}
}

func (r *Recorder) serverEntry(server string) *Stats {
	if server == "" {
		return nil
	}
	return entry(r.servers, server)
}

// ToolCall records one tool call by its call name (server__tool; the
// server of an unprefixed name is not known here and is not counted).
func (r *Recorder) ToolCall(keyID, callName, outcome string, d time.Duration) {
	server, _, ok := catalog.SplitToolID(callName)
	if !ok {
		server = ""
	}
	r.Call(keyID, server, outcome, d)
}

// RateLimitedRequest records a request of key refused by its rate limit
// (before any tool was chosen).
func (r *Recorder) RateLimitedRequest(keyID string) {
	if r == nil {
		return
	}
	now := r.now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	s := entry(r.keys, keyID)
	s.RateLimited++
	s.LastSeen = now
}

// Keys returns a summary per key, sorted by id.
func (r *Recorder) Keys() []Summary {
	return r.summaries(func(r *Recorder) map[string]*Stats { return r.keys })
}

// Servers returns a summary per server, sorted by id.
func (r *Recorder) Servers() []Summary {
	return r.summaries(func(r *Recorder) map[string]*Stats { return r.servers })
}

func (r *Recorder) summaries(pick func(*Recorder) map[string]*Stats) []Summary {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := pick(r)
	out := make([]Summary, 0, len(m))
	for id, s := range m {
		out = append(out, s.summary(id))
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Bucket is one bar of the latency chart.
type Bucket struct {
	LE    float64 `json:"le_ms"` // upper bound in ms; 0 for the +Inf bucket
	Count int64   `json:"count"`
}

// Latency returns the histogram of every call's latency (non-empty
// buckets between the first and the last non-empty one) and its p50/p99.
func (r *Recorder) Latency() (buckets []Bucket, p50, p99 float64) {
	r.mu.Lock()
	h := r.all
	r.mu.Unlock()
	first, last := -1, -1
	for i, c := range h.Counts {
		if c > 0 {
			if first < 0 {
				first = i
			}
			last = i
		}
	}
	for i := first; first >= 0 && i <= last; i++ {
		b := Bucket{Count: h.Counts[i]}
		if i < len(Bounds) {
			b.LE = ms(Bounds[i])
		}
		buckets = append(buckets, b)
	}
	return buckets, ms(h.Quantile(0.5)), ms(h.Quantile(0.99))
}

// Started is when the recorder began counting.
func (r *Recorder) Started() time.Time { return r.started }
