package retrieve

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
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

// IndexFunc adapts a function to IndexSource.
type IndexFunc func() (*vindex.Index, vindex.Meta, bool)

// Current calls f.
func (f IndexFunc) Current() (*vindex.Index, vindex.Meta, bool) { return f() }

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
	switch cfg.Fusion {
	case "":
		cfg.Fusion = FusionWeighted
	case FusionWeighted, FusionRRF:
	default:
		return nil, fmt.Errorf("retrieve: unknown fusion %q (want %q or %q)", cfg.Fusion, FusionWeighted, FusionRRF)
	}
	switch cfg.SemanticNorm {
	case "":
		cfg.SemanticNorm = NormMinMax
	case NormNone, NormMinMax:
	default:
		return nil, fmt.Errorf("retrieve: unknown semantic normalisation %q (want %q or %q)", cfg.SemanticNorm, NormNone, NormMinMax)
	}
	switch cfg.Merge {
	case "":
		cfg.Merge = MergeRoundRobin
	case MergeRoundRobin, MergeMax, MergeRRF:
	default:
		return nil, fmt.Errorf("retrieve: unknown merge %q (want %q, %q or %q)", cfg.Merge, MergeRoundRobin, MergeMax, MergeRRF)
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
	topK := req.TopK
	if topK <= 0 {
		topK = DefaultTopK
	}
	if topK > MaxTopK {
		topK = MaxTopK
	}
	if strings.TrimSpace(req.Query) == "" {
		return Response{}, errors.New("retrieve: the query is empty")
	}

	ctx, span, clk := startRetrieve(ctx, 1, topK)
	r.kw.mu.RLock()
	defer r.kw.mu.RUnlock()
	clk.mark(stageCandidates, 0)
	snap := r.visible(req)
	clk.visibleTools(snap)
	dense := r.denseIndex()
	resp := Response{FallbackUsed: dense == nil}
	lists, err := r.rankAll(ctx, clk, snap, dense, []string{req.Query}, req, topK)
	if err != nil {
		endRetrieve(span, clk, nil, dense != nil, err)
		return Response{}, err
	}
	final := lists[0]
	if len(final) > topK {
		final = final[:topK]
	}
	for i, c := range final {
		resp.Results = append(resp.Results, r.result(snap, c, i < MaxRelatedResults))
	}
	endRetrieve(span, clk, resp.Results, dense != nil, nil)
	return resp, nil
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
