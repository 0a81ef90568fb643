// Package indexer builds the vector index of the tool catalog, publishes it
// and keeps the current one available to readers.
//
// A build embeds each tool's enriched document (see Document) with the
// configured embedder, in bounded batches. Incremental builds reuse the
// vectors of tools whose document is unchanged. The built index is published
// atomically (package indexpub) and swapped in with an atomic pointer, so a
// reader never sees a half-built index. Another process's index is picked up
// with Refresh.
package indexer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/attribute"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// Mode selects how Build treats the existing index.
type Mode string

// Build modes.
const (
	// ModeFull re-embeds every tool.
	ModeFull Mode = "full"
	// ModeIncremental reuses the vectors of tools whose document is
	// unchanged, embeds changed and new tools and drops deleted ones.
	ModeIncremental Mode = "incremental"
	// ModeOff uses the persisted index as it is (at startup). Only a model
	// or dimension mismatch makes it rebuild.
	ModeOff Mode = "off"
)

// ParseMode checks a mode name ("full", "incremental" or "off").
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case ModeFull, ModeIncremental, ModeOff:
		return m, nil
	}
	return "", fmt.Errorf("unknown reindex mode %q: want full, incremental or off", s)
}

// Catalog is what the indexer reads: catalog.Store implementations satisfy
// it.
type Catalog interface {
	ListTools(ctx context.Context) ([]catalog.Tool, error)
	ListServers(ctx context.Context) ([]catalog.Server, error)
}

// DefaultBatchSize bounds how many documents go to the embedder per call.
const DefaultBatchSize = 64

// Config configures an Indexer. Catalog and Embedder are required.
type Config struct {
	Catalog  Catalog
	Embedder embed.Embedder
	// Bucket and Prefix say where the index is published (indexpub
	// layout); nil Bucket keeps the index in memory only.
	Bucket indexpub.Bucket
	Prefix string
	// BeforeSwitch, with Bucket, is called before a built index becomes
	// the published one (indexpub.Publisher.BeforeSwitch): what it writes
	// is there for every reader that sees the new pointer.
	BeforeSwitch func(ctx context.Context, next indexpub.Pointer) error
	BatchSize    int // documents per EmbedDocuments call (default 64)
	Logger       *slog.Logger
	// Flat keeps the built index's vectors as float32 (faiss
	// IndexFlatIP, 4 bytes per component). By default a build is
	// quantised to one byte per component (vindex.Index.Quantize; faiss
	// IndexScalarQuantizer QT_8bit), keeping the previous index's ranges
	// so that an unchanged catalog gives the same bytes.
	Flat bool
}

// Stats are the indexer's figures for /metrics and /health.
type Stats struct {
	ToolsInIndex  int           `json:"tools_in_index"`
	ModelID       string        `json:"model_id,omitempty"`
	LastMode      Mode          `json:"last_mode,omitempty"`
	LastBuild     time.Time     `json:"last_build,omitzero"`
	BuildDuration time.Duration `json:"build_duration_ns"`
	Embedded      int           `json:"embedded"` // documents embedded by the last build
	Reused        int           `json:"reused"`   // vectors reused by the last build
	Builds        int           `json:"builds"`
	LastError     string        `json:"last_error,omitempty"`
}

type current struct {
	ix   *vindex.Index
	meta vindex.Meta
}

// Indexer builds and serves the vector index. It is safe for concurrent use;
// builds are serialised.
type Indexer struct {
	cfg    Config
	log    *slog.Logger
	pub    *indexpub.Publisher // nil without a Bucket
	loader *indexpub.Loader

	cur     atomic.Pointer[current]
	buildMu sync.Mutex

	statsMu sync.Mutex
	stats   Stats
}

// New returns an Indexer with no index; call Build or Refresh.
func New(cfg Config) (*Indexer, error) {
	if cfg.Catalog == nil {
		return nil, errors.New("indexer: Config.Catalog is required")
	}
	if cfg.Embedder == nil {
		return nil, errors.New("indexer: Config.Embedder is required")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = DefaultBatchSize
	}
	x := &Indexer{cfg: cfg}
	if cfg.Bucket != nil {
		x.pub, x.loader = indexpub.NewPublisher(cfg.Bucket, cfg.Prefix), indexpub.NewLoader(cfg.Bucket, cfg.Prefix)
		x.pub.BeforeSwitch = cfg.BeforeSwitch
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	x.log = log
	return x, nil
}

// Current returns the index readers should search and its meta; ok is false
// while there is none (readers then fall back to a keyword scan). The
// returned index is never modified afterwards.
func (x *Indexer) Current() (*vindex.Index, vindex.Meta, bool) {
	c := x.cur.Load()
	if c == nil {
		return nil, vindex.Meta{}, false
	}
	return c.ix, c.meta, true
}

// Stats returns a copy of the indexer's figures.
func (x *Indexer) Stats() Stats {
	x.statsMu.Lock()
	defer x.statsMu.Unlock()
	s := x.stats
	if c := x.cur.Load(); c != nil {
		s.ToolsInIndex = c.ix.Len()
		s.ModelID = c.meta.ModelID
	} else {
		s.ToolsInIndex = 0
	}
	return s
}

func (x *Indexer) setError(err error) {
	x.statsMu.Lock()
	defer x.statsMu.Unlock()
	if err == nil {
		x.stats.LastError = ""
	} else {
		x.stats.LastError = err.Error()
	}
}

// compatible reports why meta cannot be used with the current embedder, or
// "" when it can.
func (x *Indexer) incompatibility(ix *vindex.Index, meta vindex.Meta) string {
	e := x.cfg.Embedder
	switch {
	case meta.ModelID != e.ModelID():
		return fmt.Sprintf("it was built with model %q and the embedder is %q", meta.ModelID, e.ModelID())
	case meta.Dim != e.Dim() || ix.Dim() != e.Dim():
		return fmt.Sprintf("it has dimension %d and the embedder produces %d", ix.Dim(), e.Dim())
	}
	return ""
}

// load reads the persisted index. It returns (nil, nil) when none was
// published and a descriptive error when it is unreadable or inconsistent.
func (x *Indexer) load(ctx context.Context) (*current, error) {
	if x.loader == nil {
		return nil, nil
	}
	ix, meta, err := x.loader.Load(ctx)
	if errors.Is(err, indexpub.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("the persisted vector index cannot be read (%w); retrieval uses the keyword scan until the index is rebuilt", err)
	}
	if ix == nil {
		return nil, errors.New("the persisted vector index is empty or missing; retrieval uses the keyword scan until the index is rebuilt")
	}
	if err := meta.Check(ix); err != nil {
		return nil, fmt.Errorf("the persisted vector index does not match its meta (%w); retrieval uses the keyword scan until the index is rebuilt", err)
	}
	return &current{ix: ix, meta: meta}, nil
}

// BuildResult describes one build.
type BuildResult struct {
	Mode     Mode // the mode actually used (a mismatch turns incremental/off into full)
	Tools    int
	Embedded int
	Reused   int
	Removed  int
	Duration time.Duration
	Skipped  []string // tools left out (key collisions)
}

// Build builds the index in the given mode, publishes it and makes it
// current. ModeOff only loads the persisted index (when the indexer has
// none yet) and rebuilds in full if that index was built with another
// model. On failure the previous index stays current.
func (x *Indexer) Build(ctx context.Context, mode Mode) (res BuildResult, err error) {
	ctx, span := tracing.Start(ctx, "index build")
	defer func() {
		if span.IsRecording() {
			span.SetAttributes(attribute.String("toolrag.index.mode", string(res.Mode)),
				attribute.Int("toolrag.index.tools", res.Tools), attribute.Int("toolrag.index.embedded", res.Embedded),
				attribute.Int("toolrag.index.reused", res.Reused), attribute.Int("toolrag.index.removed", res.Removed))
		}
		tracing.End(span, err)
	}()
	if _, err := ParseMode(string(mode)); err != nil {
		return BuildResult{}, fmt.Errorf("indexer: %w", err)
	}
	x.buildMu.Lock()
	defer x.buildMu.Unlock()

	base := x.cur.Load()
	var loadErr error
	if base == nil && mode != ModeFull {
		base, loadErr = x.load(ctx)
		if loadErr != nil {
			x.log.Error("vector index", "error", loadErr)
			x.setError(loadErr)
		}
	}
	if base != nil {
		if why := x.incompatibility(base.ix, base.meta); why != "" {
			x.log.Warn("vector index is rebuilt in full: "+why, "requested_mode", string(mode))
			base, mode = nil, ModeFull
		}
	}
	if mode == ModeOff {
		if base == nil {
			if loadErr != nil {
				return BuildResult{Mode: mode}, fmt.Errorf("indexer: %w", loadErr)
			}
			x.log.Info("no persisted vector index and reindex mode is off; retrieval uses the keyword scan until an index is built")
			return BuildResult{Mode: mode}, nil
		}
		x.cur.Store(base)
		return BuildResult{Mode: mode, Tools: base.ix.Len(), Reused: base.ix.Len()}, nil
	}
	if mode == ModeIncremental && base == nil {
		mode = ModeFull
	}
	if mode == ModeFull {
		base = nil
	}

	res, next, err := x.build(ctx, mode, base)
	if err != nil {
		err = fmt.Errorf("indexer: %s build failed, the previous index stays in use: %w", mode, err)
		x.log.Error("vector index", "error", err)
		x.setError(err)
		return res, err
	}
	var pubErr error
	if x.pub != nil {
		published, err := x.publish(ctx, next.ix, next.meta)
		switch {
		case errors.Is(err, indexpub.ErrStale):
			x.log.Info("vector index built but not published: another process published a newer one", "error", err)
		case err != nil:
			pubErr = fmt.Errorf("indexer: the index was built and is in use, but publishing it failed: %w", err)
			x.log.Error("vector index", "error", pubErr)
		default:
			next.meta = published
		}
	}
	x.cur.Store(next)
	x.statsMu.Lock()
	x.stats.LastMode = res.Mode
	x.stats.LastBuild = next.meta.BuiltAt
	x.stats.BuildDuration = res.Duration
	x.stats.Embedded = res.Embedded
	x.stats.Reused = res.Reused
	x.stats.Builds++
	x.statsMu.Unlock()
	x.setError(pubErr)
	x.log.Info("vector index built", "mode", string(res.Mode), "tools", res.Tools, "embedded", res.Embedded,
		"reused", res.Reused, "removed", res.Removed, "duration", res.Duration)
	return res, pubErr
}

// DocumentHash is the hash of a tool's enriched document: equal hashes mean
// the embedding can be reused.
func DocumentHash(doc string) string {
	sum := sha256.Sum256([]byte(doc))
	return "sha256:" + hex.EncodeToString(sum[:16])
}

func (x *Indexer) build(ctx context.Context, mode Mode, base *current) (BuildResult, *current, error) {
	start := time.Now()
	res := BuildResult{Mode: mode}
	tools, err := x.cfg.Catalog.ListTools(ctx)
	if err != nil {
		return res, nil, fmt.Errorf("reading the tool catalog: %w", err)
	}
	servers, err := x.cfg.Catalog.ListServers(ctx)
	if err != nil {
		return res, nil, fmt.Errorf("reading the server list: %w", err)
	}
	srvs := make(map[string]catalog.Server, len(servers))
	for _, s := range servers {
		srvs[s.ID] = s
	}
	e := x.cfg.Embedder
	next := &current{ix: vindex.New(e.Dim()), meta: vindex.Meta{
		ModelID: e.ModelID(),
		Dim:     e.Dim(),
		IDs:     map[string]string{},
		Hashes:  map[string]string{},
	}}
	type job struct {
		key  int64
		id   string
		doc  string
		hash string
	}
	next.ix.Grow(len(tools))
	var reuse []float32 // one buffer for the vectors copied from base
	var todo []job
	seen := make(map[string]bool, len(tools))
	for _, t := range tools {
		if t.ID == "" {
			t.ID = catalog.ToolID(t.Server, t.Name)
		}
		if seen[t.ID] {
			continue
		}
		seen[t.ID] = true
		doc := Document(t, srvs[t.Server])
		h := DocumentHash(doc)
		key, err := next.meta.Assign(t.ID)
		if err != nil {
			x.log.Error("tool left out of the vector index", "tool", t.ID, "error", err)
			res.Skipped = append(res.Skipped, t.ID)
			continue
		}
		next.meta.Hashes[t.ID] = h
		if base != nil && base.meta.Hashes[t.ID] == h {
			var ok bool
			if reuse, ok = base.ix.AppendVector(reuse[:0], key); ok {
				if err := next.ix.Upsert(key, reuse); err == nil {
					res.Reused++
					continue
				}
			}
		}
		todo = append(todo, job{key: key, id: t.ID, doc: doc, hash: h})
	}
	if base != nil {
		for id := range base.meta.Hashes {
			if !seen[id] {
				res.Removed++
			}
		}
	}
	for i := 0; i < len(todo); i += x.cfg.BatchSize {
		if err := ctx.Err(); err != nil {
			return res, nil, err
		}
		batch := todo[i:min(i+x.cfg.BatchSize, len(todo))]
		docs := make([]string, len(batch))
		for j, b := range batch {
			docs[j] = b.doc
		}
		vecs, err := e.EmbedDocuments(ctx, docs)
		if err != nil {
			return res, nil, fmt.Errorf("embedding tools %d–%d of %d: %w", i+1, i+len(batch), len(todo), err)
		}
		if len(vecs) != len(batch) {
			return res, nil, fmt.Errorf("the embedder returned %d vectors for %d documents", len(vecs), len(batch))
		}
		for j, b := range batch {
			if err := next.ix.Upsert(b.key, vecs[j]); err != nil {
				return res, nil, fmt.Errorf("tool %q: %w", b.id, err)
			}
		}
		res.Embedded += len(batch)
	}
	if !x.cfg.Flat {
		var like *vindex.Index
		if base != nil {
			like = base.ix
		}
		next.ix = next.ix.Quantize(like)
	}
	next.meta.Count = next.ix.Len()
	next.meta.BuiltAt = time.Now().UTC()
	res.Tools = next.ix.Len()
	res.Duration = time.Since(start)
	return res, next, nil
}

// Refresh loads the latest published index when it differs from the
// current one (another process published it) and makes it current. It
// reports whether the index changed. An index built with another model is
// not used.
func (x *Indexer) Refresh(ctx context.Context) (bool, error) {
	if x.loader == nil {
		return false, nil
	}
	ix, meta, changed, err := x.loader.Refresh(ctx)
	switch {
	case errors.Is(err, indexpub.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("indexer: the published vector index cannot be read (%w); the current one stays in use", err)
	case !changed && x.cur.Load() != nil:
		return false, nil
	}
	loaded := &current{ix: ix, meta: meta}
	if why := x.incompatibility(loaded.ix, loaded.meta); why != "" {
		return false, fmt.Errorf("indexer: the published index is not used: %s; rebuild it", why)
	}
	if cur := x.cur.Load(); cur != nil && sameBuild(cur.meta, loaded.meta) {
		return false, nil
	}
	x.cur.Store(loaded)
	return true, nil
}

// sameBuild reports whether two metas describe the same published build.
func sameBuild(a, b vindex.Meta) bool {
	if a.IndexSHA256 != "" && b.IndexSHA256 != "" {
		return a.IndexSHA256 == b.IndexSHA256
	}
	return a.ModelID == b.ModelID && a.Count == b.Count && a.BuiltAt.Equal(b.BuiltAt)
}

// publish publishes ix through indexpub and returns its meta as published
// (with IndexSHA256, Dim and Count filled in).
func (x *Indexer) publish(ctx context.Context, ix *vindex.Index, meta vindex.Meta) (vindex.Meta, error) {
	ctx, span := tracing.Start(ctx, "index publish")
	ptr, err := x.pub.Publish(ctx, ix, meta)
	if span.IsRecording() {
		span.SetAttributes(attribute.Int("toolrag.index.tools", ix.Len()), attribute.Bool("toolrag.index.stale", errors.Is(err, indexpub.ErrStale)))
	}
	tracing.End(span, err)
	if err != nil {
		return meta, err
	}
	// A rebuild of the published content publishes nothing: the pointer
	// keeps the build time of the first build of it.
	meta.IndexSHA256, meta.BuiltAt = ptr.SHA256, ptr.BuiltAt
	meta.Dim, meta.Count = ix.Dim(), ix.Len()
	return meta, nil
}
