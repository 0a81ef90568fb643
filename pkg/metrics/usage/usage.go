// Package usage keeps per-key and per-server call statistics since the
// process started: calls, errors, rate-limited requests, retrievals, last
// seen, a latency histogram from which p50/p99 are read, the latency per
// minute of the last hour, the recent calls and errors, and the match
// levels of retrievals (find_tools, /tool-rag/retrieve). It is what the
// operator console's overview, usage and servers pages show; it never
// records arguments, queries, results or secrets, only key ids, tool and
// server ids, outcomes and match levels.
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
	Retrievals  int64
	LastSeen    time.Time
	Latency     Histogram
}

// Summary is Stats as the console shows it.
type Summary struct {
	ID          string    `json:"id"`
	Calls       int64     `json:"calls"`
	Errors      int64     `json:"errors"`
	RateLimited int64     `json:"rate_limited"`
	Retrievals  int64     `json:"retrievals"`
	ErrorRate   float64   `json:"error_rate"`
	LastSeen    time.Time `json:"last_seen,omitzero"`
	P50ms       float64   `json:"p50_ms"`
	P99ms       float64   `json:"p99_ms"`
}

func (s *Stats) summary(id string) Summary {
	out := Summary{ID: id, Calls: s.Calls, Errors: s.Errors, RateLimited: s.RateLimited, Retrievals: s.Retrievals, LastSeen: s.LastSeen,
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

	minutes    [TimelineMinutes]minute // ring by unix minute
	recent     ring                    // the last calls
	errs       ring                    // the last failed calls
	retrievals retrievalCounts
}

// TimelineMinutes is how many minutes back the latency timeline reaches.
const TimelineMinutes = 60

// RecentCalls is how many of the last calls (and, apart, of the last
// failed calls) are kept.
const RecentCalls = 20

type minute struct {
	at      int64 // unix minute
	calls   int64
	errors  int64
	latency Histogram
}

// Call is one recorded tool call (never its arguments or result).
type Call struct {
	At      time.Time `json:"at"`
	KeyID   string    `json:"key_id"`
	Tool    string    `json:"tool"`
	Outcome string    `json:"outcome"`
	Ms      float64   `json:"ms"`
	// TraceID is the call's trace when tracing is on and it was sampled.
	TraceID string `json:"trace_id,omitempty"`
}

type ring struct {
	buf  [RecentCalls]Call
	next int
	n    int
}

func (r *ring) add(c Call) {
	r.buf[r.next] = c
	r.next = (r.next + 1) % len(r.buf)
	r.n = min(r.n+1, len(r.buf))
}

// list returns the calls, newest first.
func (r *ring) list() []Call {
	out := make([]Call, 0, r.n)
	for i := 1; i <= r.n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}

// Match levels of a retrieval's best result (retrieve.Result.Match), and
// None for a query that found nothing.
const (
	Strong  = "strong"
	Partial = "partial"
	Weak    = "weak"
	None    = "none"
)

// Retrieval sources.
const (
	FindTools = "find_tools"
	REST      = "rest"
)

type retrievalCounts struct {
	requests int64
	queries  int64
	source   map[string]int64
	match    map[string]int64
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
	r.call(keyID, server, "", outcome, "", d)
}

func (r *Recorder) call(keyID, server, tool, outcome, traceID string, d time.Duration) {
	if r == nil {
		return
	}
	now := r.now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	c := Call{At: now, KeyID: keyID, Tool: tool, Outcome: outcome, Ms: ms(d), TraceID: traceID}
	r.recent.add(c)
	if outcome != OK {
		r.errs.add(c)
	}
	if outcome != RateLimited {
		m := r.minute(now)
		m.calls++
		if outcome != OK {
			m.errors++
		}
		m.latency.observe(d)
	}
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

// minute returns the timeline slot of t, reset when it last held an
// older minute. r.mu is held.
func (r *Recorder) minute(t time.Time) *minute {
	at := t.Unix() / 60
	m := &r.minutes[at%TimelineMinutes]
	if m.at != at {
		*m = minute{at: at}
	}
	return m
}

// seen returns the stats of key, marked seen at now. r.mu is held.
func (r *Recorder) seen(keyID string, now time.Time) *Stats {
	s := entry(r.keys, keyID)
	s.LastSeen = now
	return s
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
	r.TracedToolCall(keyID, callName, outcome, "", d)
}

// TracedToolCall is ToolCall for a call traced as traceID ("" when not
// traced): the console's call rows link to it.
func (r *Recorder) TracedToolCall(keyID, callName, outcome, traceID string, d time.Duration) {
	server, _, ok := catalog.SplitToolID(callName)
	if !ok {
		server = ""
	}
	r.call(keyID, server, callName, outcome, traceID, d)
}

// Retrieval records one retrieval of key (find_tools or a REST
// /tool-rag/retrieve request; source FindTools or REST) with the match
// level of each query's best result ("" or None: nothing found).
func (r *Recorder) Retrieval(keyID, source string, matches []string) {
	if r == nil {
		return
	}
	now := r.now().UTC()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seen(keyID, now).Retrievals++
	c := &r.retrievals
	if c.source == nil {
		c.source, c.match = map[string]int64{}, map[string]int64{}
	}
	c.requests++
	c.source[source]++
	for _, m := range matches {
		switch m {
		case Strong, Partial, Weak:
		default:
			m = None
		}
		c.queries++
		c.match[m]++
	}
}

// RetrievalSummary counts the retrievals since start: requests by source,
// and the queries by the match level of their best result. Weak (and
// None) answers are the early sign that the catalog lacks a tool.
type RetrievalSummary struct {
	Requests int64            `json:"requests"`
	BySource map[string]int64 `json:"by_source"`
	Queries  int64            `json:"queries"`
	ByMatch  map[string]int64 `json:"by_match"`
	// WeakShare is the share of queries whose best result was weak or
	// absent (0 without queries).
	WeakShare float64 `json:"weak_share"`
}

// Retrievals returns the retrieval counts.
func (r *Recorder) Retrievals() RetrievalSummary {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.retrievals
	out := RetrievalSummary{Requests: c.requests, Queries: c.queries,
		BySource: map[string]int64{FindTools: c.source[FindTools], REST: c.source[REST]},
		ByMatch:  map[string]int64{Strong: c.match[Strong], Partial: c.match[Partial], Weak: c.match[Weak], None: c.match[None]}}
	if c.queries > 0 {
		out.WeakShare = float64(c.match[Weak]+c.match[None]) / float64(c.queries)
	}
	return out
}

// Recent returns the last calls and the last failed calls, newest first.
func (r *Recorder) Recent() (calls, errors []Call) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.recent.list(), r.errs.list()
}

// Point is one minute of the latency timeline.
type Point struct {
	Start  time.Time `json:"start"`
	Calls  int64     `json:"calls"`
	Errors int64     `json:"errors"`
	P50ms  float64   `json:"p50_ms"`
	P99ms  float64   `json:"p99_ms"`
}

// Timeline returns one point per minute, oldest first, from the first
// minute with a call in the last TimelineMinutes to the current minute
// (minutes without calls have zero counts); empty when no call was made
// in that time.
func (r *Recorder) Timeline() []Point {
	now := r.now().UTC().Unix() / 60
	r.mu.Lock()
	defer r.mu.Unlock()
	first := int64(-1)
	for at := now - TimelineMinutes + 1; at <= now; at++ {
		if m := r.minutes[at%TimelineMinutes]; m.at == at && m.calls > 0 {
			first = at
			break
		}
	}
	if first < 0 {
		return []Point{}
	}
	out := make([]Point, 0, now-first+1)
	for at := first; at <= now; at++ {
		p := Point{Start: time.Unix(at*60, 0).UTC()}
		if m := r.minutes[at%TimelineMinutes]; m.at == at {
			p.Calls, p.Errors = m.calls, m.errors
			p.P50ms, p.P99ms = ms(m.latency.Quantile(0.5)), ms(m.latency.Quantile(0.99))
		}
		out = append(out, p)
	}
	return out
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
	r.seen(keyID, now).RateLimited++
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
