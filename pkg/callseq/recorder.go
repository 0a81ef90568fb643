package callseq

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"
)

// Defaults of RecorderConfig.
const (
	DefaultWindow      = 15 * time.Minute
	DefaultKeyWindow   = 2 * time.Minute
	DefaultMaxSessions = 10000
	DefaultFlushEvery  = 30 * time.Second
	DefaultMaxPending  = 512
	// DefaultMinPrincipals and DefaultPrincipalDayCap are the gateway's
	// settings (TOOL_RAG_CALLSEQ_MIN_PRINCIPALS,
	// TOOL_RAG_CALLSEQ_PRINCIPAL_DAY_CAP): a pair counts once 3 keys made
	// it on one day, and one key adds at most 1 to a pair a day.
	DefaultMinPrincipals   = 3
	DefaultPrincipalDayCap = 1
	// maxHeld bounds the pairs kept while the store fails; beyond it new
	// pairs are dropped (and counted in Stats.Dropped).
	maxHeld = 20000
	// flushTimeout bounds one background flush.
	flushTimeout = 10 * time.Second
)

// RecorderConfig configures a Recorder. Store is required.
type RecorderConfig struct {
	Store Store
	// Window is the longest gap between two calls of a session that still
	// counts as "called after" (default 15 minutes).
	Window time.Duration
	// KeyWindow is the same for the calls of one key made without a
	// session (default 2 minutes): agents sharing a key interleave their
	// calls there, so the window is short.
	KeyWindow time.Duration
	// MaxSessions bounds the sessions whose last call is remembered
	// (default 10,000); beyond it the least recent are forgotten.
	MaxSessions int
	// FlushEvery is how long a counted pair waits, at most, before it is
	// added to the store (default 30 s); MaxPending distinct pairs flush
	// at once (default 512).
	FlushEvery time.Duration
	MaxPending int
	// MinPrincipals is how many distinct principals (key ids) must make a
	// pair on one day before it is counted at all (k-anonymity): until
	// then its calls are held in memory, then all of them are counted.
	// One key cannot put a pair into anyone's related tools on its own.
	// 0 or 1: every pair counts at once. Per process: on AWS each
	// instance needs that many on its own, which only counts less.
	MinPrincipals int
	// PrincipalDayCap is the most one principal adds to one pair per day
	// (0: no cap), so that a few keys cannot outweigh everyone's use.
	PrincipalDayCap int
	Now             func() time.Time
	Logger          *slog.Logger
}

// Stats are the Recorder's counters.
type Stats struct {
	Counted int64 // pairs counted
	Flushed int64 // counts added to the store (distinct pairs per flush)
	Errors  int64 // failed flushes (their pairs are kept for the next one)
	Dropped int64 // pairs dropped because the store kept failing
	// Withheld counts pairs made but not counted: beyond a principal's
	// PrincipalDayCap, or held for MinPrincipals and forgotten at the
	// day's end.
	Withheld int64
}

// pairUse is what a day's pair has seen of its principals (memory only).
type pairUse struct {
	by       map[string]int64 // principal → calls counted or held today
	held     int64            // calls held until MinPrincipals is reached
	released bool             // MinPrincipals reached: calls count at once
}

// last is a session's last call.
type last struct {
	tool string
	at   time.Time
	seq  uint64 // recency, for eviction
}

// scope is what a call continues: a key's session, or the key's calls
// without a session (session "").
type scope struct{ key, session string }

type pairKey struct {
	from, to string
	day      int32
}

// Recorder counts, per session, which tool is called right after which
// and adds the counts to the store in the background. Only the pair, its
// count and its day leave the process; the session ids it keys its
// memory by are held in memory only, for at most Window. It is safe for
// concurrent use; ToolCalled does not block on the store.
type Recorder struct {
	cfg RecorderConfig
	log *slog.Logger

	mu       sync.Mutex
	sessions map[scope]*last
	seq      uint64
	pending  map[pairKey]int64
	uses     map[pairKey]*pairUse // today's pairs, for MinPrincipals and PrincipalDayCap
	usesDay  int32
	timer    *time.Timer
	flushing bool

	flushMu                                   sync.Mutex // one flush at a time
	counted, flushed, errs, dropped, withheld atomic.Int64
}

// NewRecorder returns a Recorder on cfg.Store.
func NewRecorder(cfg RecorderConfig) *Recorder {
	if cfg.Window <= 0 {
		cfg.Window = DefaultWindow
	}
	if cfg.KeyWindow <= 0 {
		cfg.KeyWindow = DefaultKeyWindow
	}
	if cfg.KeyWindow > cfg.Window {
		cfg.KeyWindow = cfg.Window
	}
	if cfg.MaxSessions <= 0 {
		cfg.MaxSessions = DefaultMaxSessions
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	if cfg.MaxPending <= 0 {
		cfg.MaxPending = DefaultMaxPending
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Recorder{cfg: cfg, log: log, sessions: map[scope]*last{}, pending: map[pairKey]int64{}, uses: map[pairKey]*pairUse{}}
}

// ToolCalled records that a session of key keyID called tool (a catalog
// tool id) and succeeded. A session is remembered under its key: another
// key's call in the same session id continues nothing. A request without
// a session (protocol 2026-07-28 has none, nor has a stateless client)
// continues the key's previous session-less call when it came at most
// KeyWindow before. A repeated call of the same tool and a call more than
// Window after the session's previous one count nothing.
func (r *Recorder) ToolCalled(keyID, sessionID, tool string) {
	if r == nil || tool == "" || len(tool) > MaxToolID {
		return
	}
	session, window := scope{keyID, sessionID}, r.cfg.Window
	if sessionID == "" {
		if keyID == "" {
			return
		}
		window = r.cfg.KeyWindow
	}
	now := r.cfg.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	l := r.sessions[session]
	if l == nil {
		if len(r.sessions) >= r.cfg.MaxSessions {
			r.evict(now)
		}
		r.sessions[session] = &last{tool: tool, at: now, seq: r.seq}
		return
	}
	prev, gap := l.tool, now.Sub(l.at)
	l.tool, l.at, l.seq = tool, now, r.seq
	if prev == tool || gap > window || gap < 0 {
		return
	}
	k := pairKey{prev, tool, Day(now)}
	if _, ok := r.pending[k]; !ok && len(r.pending) >= maxHeld {
		r.dropped.Add(1)
		return
	}
	n := r.admitLocked(k, keyID)
	if n == 0 {
		return
	}
	r.pending[k] += n
	r.counted.Add(n)
	switch {
	case len(r.pending) >= r.cfg.MaxPending:
		r.flushLocked()
	case !r.flushing:
		r.armLocked()
	}
}

// admitLocked applies MinPrincipals and PrincipalDayCap to one call of
// pair k by principal and returns how many calls to count now: 0 (capped,
// or held), 1, or the held calls with this one when it makes the pair's
// MinPrincipals-th principal. r.mu is held.
func (r *Recorder) admitLocked(k pairKey, principal string) int64 {
	if r.cfg.MinPrincipals <= 1 && r.cfg.PrincipalDayCap <= 0 {
		return 1
	}
	if k.day != r.usesDay {
		for _, u := range r.uses {
			if !u.released {
				r.withheld.Add(u.held)
			}
		}
		r.uses, r.usesDay = map[pairKey]*pairUse{}, k.day
	}
	u := r.uses[k]
	if u == nil {
		if len(r.uses) >= maxHeld {
			r.withheld.Add(1)
			return 0
		}
		u = &pairUse{by: map[string]int64{}}
		r.uses[k] = u
	}
	if r.cfg.PrincipalDayCap > 0 && u.by[principal] >= int64(r.cfg.PrincipalDayCap) {
		r.withheld.Add(1)
		return 0
	}
	u.by[principal]++
	if u.released {
		return 1
	}
	u.held++
	if len(u.by) < r.cfg.MinPrincipals {
		return 0
	}
	n := u.held
	u.held, u.released = 0, true
	return n
}

// armLocked starts the timer of the next flush unless one is set. r.mu is
// held.
func (r *Recorder) armLocked() {
	if r.timer != nil {
		return
	}
	r.timer = time.AfterFunc(r.cfg.FlushEvery, func() {
		r.mu.Lock()
		r.timer = nil
		r.flushLocked()
		r.mu.Unlock()
	})
}

// evict forgets the sessions idle for more than Window, or, when none is,
// the least recent eighth of them. r.mu is held.
func (r *Recorder) evict(now time.Time) {
	for id, l := range r.sessions {
		if now.Sub(l.at) > r.cfg.Window {
			delete(r.sessions, id)
		}
	}
	if len(r.sessions) < r.cfg.MaxSessions {
		return
	}
	cut := r.seq - uint64(len(r.sessions)) + uint64(len(r.sessions)/8+1)
	for id, l := range r.sessions {
		if l.seq < cut {
			delete(r.sessions, id)
		}
	}
}

// flushLocked starts a background flush of the pending counts unless one
// is running (it picks them up when done). r.mu is held.
func (r *Recorder) flushLocked() {
	if r.flushing || len(r.pending) == 0 {
		return
	}
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	r.flushing = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), flushTimeout)
		defer cancel()
		for {
			n, err := r.flushOnce(ctx)
			r.mu.Lock()
			if err != nil || n == 0 || len(r.pending) < r.cfg.MaxPending {
				r.flushing = false
				if len(r.pending) > 0 {
					r.armLocked()
				}
				r.mu.Unlock()
				return
			}
			r.mu.Unlock()
		}
	}()
}

// flushOnce takes the pending counts and adds them to the store; on error
// they are put back. It returns how many pairs it added.
func (r *Recorder) flushOnce(ctx context.Context) (int, error) {
	r.flushMu.Lock()
	defer r.flushMu.Unlock()
	r.mu.Lock()
	batch := r.pending
	r.pending = map[pairKey]int64{}
	r.mu.Unlock()
	if len(batch) == 0 {
		return 0, nil
	}
	counts := make([]Count, 0, len(batch))
	for k, n := range batch {
		counts = append(counts, Count{From: k.from, To: k.to, N: n, Day: k.day})
	}
	if err := r.cfg.Store.AddCallSequences(ctx, counts); err != nil {
		r.errs.Add(1)
		r.log.Warn("could not store the call-sequence counts; they are kept for the next try", "pairs", len(counts), "error", err)
		r.mu.Lock()
		for k, n := range batch {
			if _, ok := r.pending[k]; !ok && len(r.pending) >= maxHeld {
				r.dropped.Add(n)
				continue
			}
			r.pending[k] += n
		}
		r.mu.Unlock()
		return 0, err
	}
	r.flushed.Add(int64(len(counts)))
	return len(counts), nil
}

// Flush adds every pending count to the store now and waits for it: at
// shutdown, and before the sync reads the counts back.
func (r *Recorder) Flush(ctx context.Context) error {
	if r == nil {
		return nil
	}
	r.mu.Lock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	r.mu.Unlock()
	_, err := r.flushOnce(ctx)
	return err
}

// Stats returns the counters.
func (r *Recorder) Stats() Stats {
	if r == nil {
		return Stats{}
	}
	return Stats{Counted: r.counted.Load(), Flushed: r.flushed.Load(), Errors: r.errs.Load(), Dropped: r.dropped.Load(), Withheld: r.withheld.Load()}
}
