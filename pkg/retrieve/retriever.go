package retrieve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// ToolLister reads the catalog. catalog.Store implementations satisfy it.
type ToolLister interface {
	ListTools(ctx context.Context) ([]catalog.Tool, error)
	ListServers(ctx context.Context) ([]catalog.Server, error)
}

// IndexSource returns the current vector index and its meta, or ok=false
// when there is none (not built yet, or the persisted one was unreadable).
// *indexer.Indexer implements it.
type IndexSource interface {
	Current() (ix *vindex.Index, meta vindex.Meta, ok bool)
}

// Retriever ranks catalog tools for queries. It is safe for concurrent use.
type Retriever struct {
	cfg    Config
	kw     *KeywordIndex
	log    *slog.Logger
	syncMu sync.Mutex
	synced bool
	// prepared are terms for the next Sync (UsePrepared); reused counts
	// the tools the last Sync took from them.
	prepared *KeywordTerms
	reused   int

	srvTerms serverTermsCache

	seq atomic.Pointer[callseq.Table] // observed call sequences (SetCallSequences)

	keyMu   sync.Mutex
	keys    map[int64]*kdoc // vector id → keyword entry, for keysFor at keysGen
	keysFor *vindex.Index
	keysGen uint64
}

// New returns a Retriever. Call Sync after the catalog changes; the first
// Retrieve syncs on its own.
func New(cfg Config) (*Retriever, error) {
	if cfg.Tools == nil {
		return nil, errors.New("retrieve: Config.Tools is required")
	}
	if cfg.Weights == (Weights{}) {
		cfg.Weights = DefaultWeights
	}
	for _, c := range []struct {
		v        *string
		what     string
		fallback string
		allowed  []string
	}{
		{&cfg.Fusion, "fusion", FusionWeighted, []string{FusionWeighted, FusionRRF}},
		{&cfg.SemanticNorm, "semantic normalisation", NormMinMax, []string{NormNone, NormMinMax}},
		{&cfg.Merge, "merge", MergeRoundRobin, []string{MergeRoundRobin, MergeMax, MergeRRF}},
	} {
		if err := oneOf(c.v, c.what, c.fallback, c.allowed); err != nil {
			return nil, err
		}
	}
	if cfg.RerankPool <= 0 || cfg.RerankPool > MaxRerankPool {
		cfg.RerankPool = MaxRerankPool
	}
	if cfg.Candidates <= 0 {
		cfg.Candidates = DefaultCandidates
	}
	if cfg.SynonymWeight <= 0 {
		cfg.SynonymWeight = DefaultSynonymWeight
	}
	switch {
	case cfg.ServerWeight == 0:
		cfg.ServerWeight = DefaultServerWeight
	case cfg.ServerWeight < 0:
		cfg.ServerWeight = 0
	}
	switch {
	case cfg.VerbWeight == 0:
		cfg.VerbWeight = DefaultVerbWeight
	case cfg.VerbWeight < 0:
		cfg.VerbWeight = 0
	}
	if cfg.DisablePenalties {
		cfg.StalePenalty, cfg.ScopePenalty = 0, 0
	} else {
		if cfg.StalePenalty == 0 {
			cfg.StalePenalty = -0.05
		}
		if cfg.ScopePenalty == 0 {
			cfg.ScopePenalty = -0.1
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	kw := NewKeywordIndex(cfg.FieldWeights)
	kw.outputSchema = cfg.OutputSchemaText
	return &Retriever{cfg: cfg, kw: kw, log: log}, nil
}

// Sync re-reads the catalog and updates the in-memory keyword index
// incrementally (only changed tools are re-tokenized).
func (r *Retriever) Sync(ctx context.Context) error {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	tools, err := catalog.SharedTools(ctx, r.cfg.Tools) // read only
	if err != nil {
		return fmt.Errorf("retrieve: reading the tool catalog: %w", err)
	}
	servers, err := r.cfg.Tools.ListServers(ctx)
	if err != nil {
		return fmt.Errorf("retrieve: reading the server list: %w", err)
	}
	prep := r.prepared
	r.prepared, r.reused = nil, 0
	if prep != nil {
		_, _, reused := r.kw.SyncPrepared(tools, servers, prep)
		r.reused = reused
		if reused < len(tools) {
			r.log.Info("keyword terms published with the catalog did not cover every tool; the others were analysed",
				"reused", reused, "tools", len(tools))
		}
	} else {
		r.kw.Sync(tools, servers)
	}
	r.synced = true
	return nil
}

// PreparedTools returns how many tools the last Sync took from the terms
// UsePrepared handed it instead of analysing them.
func (r *Retriever) PreparedTools() int {
	r.syncMu.Lock()
	defer r.syncMu.Unlock()
	return r.reused
}

// UsePrepared hands the next Sync the terms published with the catalog
// (see KeywordTerms): the tools they were analysed for are not tokenized
// again. Nil does nothing.
func (r *Retriever) UsePrepared(p *KeywordTerms) {
	r.syncMu.Lock()
	r.prepared = p
	r.syncMu.Unlock()
}

func (r *Retriever) ensureSynced(ctx context.Context) error {
	r.syncMu.Lock()
	done := r.synced
	r.syncMu.Unlock()
	if done {
		return nil
	}
	return r.Sync(ctx)
}

// Keywords returns the retriever's keyword index (for metrics and tests).
func (r *Retriever) Keywords() *KeywordIndex { return r.kw }

// Tool returns one catalog tool by its merged id. It does not apply a
// policy: callers check Policy.AllowsTool themselves.
func (r *Retriever) Tool(ctx context.Context, id string) (catalog.Tool, error) {
	if err := r.ensureSynced(ctx); err != nil {
		return catalog.Tool{}, err
	}
	if t, ok := r.kw.Tool(id); ok {
		return t, nil
	}
	if g, ok := r.cfg.Tools.(interface {
		GetTool(ctx context.Context, id string) (catalog.Tool, error)
	}); ok {
		return g.GetTool(ctx, id)
	}
	return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
}

// Retrieve ranks the tools the request's policy allows for its query.
func (r *Retriever) Retrieve(ctx context.Context, req Request) (Response, error) {
	if err := r.ensureSynced(ctx); err != nil {
		return Response{}, err
	}
	if len(req.Query) > maxQueryBytes {
		req.Query = req.Query[:maxQueryBytes]
	}
	if strings.TrimSpace(req.Query) == "" {
		return Response{}, errors.New("retrieve: the query is empty")
	}
	g, err := r.search(ctx, req, []string{req.Query}, clampTopK(req.TopK))
	if err != nil {
		return Response{}, err
	}
	return Response{Results: g.Groups[0].Results, FallbackUsed: g.FallbackUsed}, nil
}

// oneOf sets *v to fallback when it is empty and is an error naming what
// when it is none of allowed.
func oneOf(v *string, what, fallback string, allowed []string) error {
	if *v == "" {
		*v = fallback
		return nil
	}
	if slices.Contains(allowed, *v) {
		return nil
	}
	want := make([]string, len(allowed))
	for i, a := range allowed {
		want[i] = strconv.Quote(a)
	}
	last := len(want) - 1
	return fmt.Errorf("retrieve: unknown %s %q (want %s or %s)", what, *v, strings.Join(want[:last], ", "), want[last])
}

// result turns a ranked candidate into a Result with its match level and,
// when withRelated, its related tools.
func (r *Retriever) result(snap *visibleCorpus, c *candidate, withRelated bool) Result {
	res := Result{Tool: c.d.tool, Score: round6(c.score), Reason: r.reason(c)}
	res.Signals = matchSignals(c)
	res.Match = r.cfg.Calibration.Level(res.Signals)
	if r.cfg.Related >= 0 && withRelated {
		res.Related = r.related(snap, c.d)
	}
	return res
}
