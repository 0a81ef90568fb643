package app

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// FollowConfig makes an App follow a vector index that another process
// publishes, as the AWS runtime's gateways follow the sync function's:
// the App loads a newer index when one is published, then applies the
// catalog that goes with it.
type FollowConfig struct {
	// Every is how often a request checks for a newer index first (one
	// conditional read of the pointer). The check is lazy, on a request,
	// because Lambda freezes the process between invocations.
	Every time.Duration
	// CatalogMaxAge re-reads the catalog even when no new index was
	// published.
	CatalogMaxAge time.Duration
	// HealthEvery is how often Health is called.
	HealthEvery time.Duration
	// Catalog says which catalog to apply after a new index was loaded
	// (or CatalogMaxAge passed); a nil Change means the catalog did not
	// change.
	Catalog func(ctx context.Context) (*Change, error)
	// Health re-reads the upstreams' health (optional); rebuild asks for
	// the catalog to be applied again on this refresh (e.g. a server went
	// down, so its stored prompts and resources are withheld).
	Health func(ctx context.Context) (rebuild bool, err error)
	// Where names the published index in log lines.
	Where string
	// Fetched reports the time spent reading the index bucket and the
	// bytes read so far (optional): ColdStart splits the index load into
	// fetch and parse with it.
	Fetched func() (time.Duration, int64)
	// Now is the clock of the checks (nil: time.Now).
	Now func() time.Time
}

// ColdStart is where the first load of a following App spent its time.
type ColdStart struct {
	Init       time.Duration `json:"init_ns"`        // clients, stores, embedder, MCP server
	IndexFetch time.Duration `json:"index_fetch_ns"` // reads of the index bucket: pointer, meta, index blob
	IndexParse time.Duration `json:"index_parse_ns"` // SHA-256 check, decode, meta check
	IndexBytes int64         `json:"index_bytes"`    // bytes read from the bucket
	Catalog    time.Duration `json:"catalog_ns"`     // FollowConfig.Catalog and reading the catalog
	Keywords   time.Duration `json:"keywords_ns"`    // keyword index over the catalog (concurrent with Surface)
	Surface    time.Duration `json:"surface_ns"`     // MCP tool list and upstream prompts/resources (concurrent with Keywords)
	Total      time.Duration `json:"total_ns"`
}

// Follower keeps an App on the published index (App.Follow).
type Follower struct {
	a   *App
	cfg FollowConfig
	log *slog.Logger

	mu         sync.Mutex // one refresh at a time
	nextCheck  atomic.Int64
	refreshes  atomic.Int64
	catalogDue bool // a new index (or index error) was seen and the catalog not re-read since
	catalogAt  time.Time
	healthAt   time.Time
	indexErr   string // the last index error logged (logged once)
	noIndex    bool   // "no index published yet" was logged
	errShown   atomic.Pointer[string]

	began  time.Time
	init   time.Duration
	cold   ColdStart // written before loaded is closed
	loaded chan struct{}
}

// Follow makes a follower of the published index. Call Start once.
func (a *App) Follow(cfg FollowConfig) *Follower {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	return &Follower{a: a, cfg: cfg, log: a.log, loaded: make(chan struct{})}
}

// Start does the first load: the index, the health, the catalog. It waits
// up to wait for it (0: however long it takes); when wait runs out, it
// returns and the load goes on in the background, repeated after a
// failure (first after retry, then doubling up to 30 s) until it succeeds.
// Requests meet the App's WhileLoading rule meanwhile. began is when the
// process started building the App (the cold start's Init ends now).
func (f *Follower) Start(ctx context.Context, began time.Time, wait, retry time.Duration) error {
	f.began, f.init = began, time.Since(began)
	type result struct {
		cold ColdStart
		err  error
	}
	first := make(chan result, 1)
	go func() {
		cold := ColdStart{Init: f.init}
		err := f.refresh(context.WithoutCancel(ctx), &cold)
		first <- result{cold, err}
	}()
	var waitOver <-chan time.Time
	if wait > 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		waitOver = t.C
	}
	select {
	case res := <-first:
		if res.err != nil {
			return res.err
		}
		f.markLoaded(res.cold)
	case <-waitOver:
		f.log.Warn("the catalog and index are still loading; the function starts now and requests wait for the load", "waited", wait)
		go func() {
			res := <-first
			f.retryLoad(res.cold, res.err, retry)
		}()
	}
	return nil
}

// loadAttemptTimeout bounds one background retry of the first load.
const loadAttemptTimeout = 5 * time.Minute

// retryLoad repeats the first load until it succeeds (a Lambda process
// runs only while it is serving, so the retries happen while requests
// wait for them).
func (f *Follower) retryLoad(cold ColdStart, err error, retry time.Duration) {
	if retry <= 0 {
		retry = time.Second
	}
	for err != nil {
		f.log.Error("loading the catalog failed; retrying", "error", err, "in", retry)
		time.Sleep(retry)
		retry = min(2*retry, 30*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), loadAttemptTimeout)
		err = f.refresh(ctx, &cold)
		cancel()
	}
	f.markLoaded(cold)
}

func (f *Follower) markLoaded(cold ColdStart) {
	cold.Total = time.Since(f.began)
	f.cold = cold
	close(f.loaded)
	f.log.Info("gateway ready", "tools", f.a.Catalog.Len(), "index", f.a.Indexer.Stats().ToolsInIndex,
		"servers", len(f.a.b.Upstreams.Servers()), "cold_start", cold.Total.Round(time.Millisecond))
}

// Loaded is closed when the first load is done and its cold start
// recorded.
func (f *Follower) Loaded() <-chan struct{} { return f.loaded }

// ColdStart returns where the first load spent its time (only Init until
// Loaded is closed).
func (f *Follower) ColdStart() ColdStart {
	select {
	case <-f.loaded:
		return f.cold
	default:
		return ColdStart{Init: f.init}
	}
}

// Refreshes counts the index checks.
func (f *Follower) Refreshes() int64 { return f.refreshes.Load() }

// IndexError is the published index's last error ("" when it loads).
func (f *Follower) IndexError() string {
	if e := f.errShown.Load(); e != nil {
		return *e
	}
	return ""
}

// Exclusive runs fn with no refresh under way (e.g. a rebuild of the index
// in place).
func (f *Follower) Exclusive(fn func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn()
}

// Handler serves h, first checking for a newer index when Every has
// passed since the last check; a concurrent request does not wait for
// that check. Before the first load, requests go to h at once (the App's
// WhileLoading rule applies there).
func (f *Follower) Handler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f.a.Ready() {
			if now := f.cfg.Now(); now.UnixNano() >= f.nextCheck.Load() && f.mu.TryLock() {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 20*time.Second)
				if err := f.refreshLocked(ctx, now, nil); err != nil {
					f.log.Error("refresh failed; serving the previous catalog and index", "error", err)
				}
				cancel()
				f.mu.Unlock()
			}
		}
		h.ServeHTTP(w, r)
	})
}

// Refresh checks for a newer index and catalog now, regardless of Every.
func (f *Follower) Refresh(ctx context.Context) error { return f.refresh(ctx, nil) }

func (f *Follower) refresh(ctx context.Context, cold *ColdStart) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.refreshLocked(ctx, f.cfg.Now(), cold)
}

// refreshLocked loads a newer index, the health when it is older than
// HealthEvery, then applies the catalog when a new index was loaded (or
// the catalog is older than CatalogMaxAge). Only catalog errors are
// returned: an unusable index leaves the current one, or the keyword
// fallback, in charge.
func (f *Follower) refreshLocked(ctx context.Context, now time.Time, cold *ColdStart) error {
	f.refreshes.Add(1)
	var fetch0 time.Duration
	var bytes0 int64
	if f.cfg.Fetched != nil {
		fetch0, bytes0 = f.cfg.Fetched()
	}
	t0 := time.Now()
	changed, err := f.a.Indexer.Refresh(ctx)
	if cold != nil && f.cfg.Fetched != nil {
		fetch1, bytes1 := f.cfg.Fetched()
		cold.IndexFetch, cold.IndexBytes = fetch1-fetch0, bytes1-bytes0
		cold.IndexParse = max(0, time.Since(t0)-cold.IndexFetch)
	}
	if f.noteIndex(err) || changed {
		f.catalogDue = true
	}
	if f.cfg.Health != nil && now.Sub(f.healthAt) >= f.cfg.HealthEvery {
		if rebuild, err := f.cfg.Health(ctx); err != nil {
			f.log.Warn("could not read upstream health; keeping the previous view", "error", err)
		} else {
			f.healthAt, f.catalogDue = now, f.catalogDue || rebuild
		}
	}
	defer func() { f.nextCheck.Store(now.Add(f.cfg.Every).UnixNano()) }()
	if !f.catalogDue && !f.catalogAt.IsZero() && now.Sub(f.catalogAt) < f.cfg.CatalogMaxAge {
		return nil
	}
	t1 := time.Now()
	change, err := f.cfg.Catalog(ctx)
	read := time.Since(t1)
	if err != nil {
		return err
	}
	if change != nil {
		res, err := f.a.Apply(ctx, *change)
		if err != nil {
			return err
		}
		if cold != nil {
			cold.Catalog, cold.Keywords, cold.Surface = read+res.Read, res.Keywords, res.Surface
		}
	}
	f.catalogDue, f.catalogAt = false, now
	return nil
}

// noteIndex logs the index state once per change: an unusable index, a
// missing one, or a recovery. It reports whether the state changed.
func (f *Follower) noteIndex(err error) (changed bool) {
	_, _, ok := f.a.Indexer.Current()
	switch {
	case err != nil:
		if msg := err.Error(); msg != f.indexErr {
			f.indexErr, changed = msg, true
			if ok {
				f.log.Error("the published vector index cannot be used; the current one stays in use", "pointer", f.cfg.Where, "error", err)
			} else {
				f.log.Error("the published vector index cannot be used; find_tools answers with the keyword fallback (fallback_used=true) until a good index is published", "pointer", f.cfg.Where, "error", err)
			}
		}
	case !ok:
		if !f.noIndex {
			f.noIndex = true
			f.log.Warn("no vector index is published yet; find_tools answers with the keyword fallback (fallback_used=true) until one is published", "pointer", f.cfg.Where)
		}
	default:
		if f.indexErr != "" || f.noIndex {
			changed = true
			st := f.a.Indexer.Stats()
			f.log.Info("vector index loaded; semantic retrieval is back", "tools", st.ToolsInIndex, "model", st.ModelID)
		}
		f.indexErr, f.noIndex = "", false
	}
	shown := f.indexErr
	f.errShown.Store(&shown)
	return changed
}
