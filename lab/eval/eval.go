// Package eval measures retrieval quality on a benchmark dataset: it loads
// the catalog into a temporary SQLite store, builds the vector index with
// the indexer, runs every query through the retriever with an unrestricted
// policy and reports recall, group recall, nDCG, MRR, hit rate, query
// latency and index build time. Ablation compares configurations on one
// dataset.
package eval

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// Config is one retrieval configuration.
type Config struct {
	Name string
	// Embedder embeds tools and queries; nil means embed.NewBuiltin().
	Embedder embed.Embedder
	// NoDense leaves the vector index out: BM25F alone (the keyword
	// fallback path).
	NoDense bool
	// FlatIndex keeps the index's vectors float32 (indexer.Config.Flat)
	// instead of the default 8-bit codes.
	FlatIndex bool
	// The retriever's ranking knobs (zero values: its defaults).
	retrieve.Experimental
	Reranker retrieve.Reranker
	// PlainBM25 ranks with the textbook single-field BM25 baseline
	// instead of the retriever (all other settings are ignored).
	PlainBM25 bool
	// CallSequences, when set, is handed to the retriever
	// (Retriever.SetCallSequences): observed call sequences for related.
	CallSequences *callseq.Table
}

// Options configure Run and Ablation.
type Options struct {
	Dataset string // folder with tools.jsonl and queries.jsonl
	TopK    int    // results per query (default 10)
	Config  Config // Run only
	// Source puts the catalog into the store (default DirectSource).
	Source Source
	// Limit evaluates only the first Limit queries (0: all).
	Limit int
	// Progress, when set, receives a line per step of a long run
	// (loading, each configuration, every 10 % of the queries).
	Progress io.Writer
	// PerQuery, when set, receives one JSON line per query and
	// configuration (QueryResult), for looking into what a configuration
	// misses.
	PerQuery io.Writer
	// Features, when set, receives one JSON line per query and
	// configuration (FeatureRow): the ranking features of its best
	// FeatureRows candidates, for fitting a learned scorer.
	Features io.Writer
}

// FeatureRows is how many candidates per query Options.Features writes.
const FeatureRows = 100

// featureDump records the features of the last query c ranked (nil when
// Options.Features is not set, and for the plain BM25 baseline, which has
// none).
type featureDump struct {
	enc   *json.Encoder
	feats []retrieve.Features
}

func (e *env) featureDump(c *Config) *featureDump {
	if e.features == nil || c.PlainBM25 {
		return nil
	}
	fd := &featureDump{enc: e.features}
	inner := c.Scorer
	c.Scorer = func(fs []retrieve.Features) []float64 {
		fd.feats = append(fd.feats[:0], fs...)
		if inner != nil {
			return inner(fs)
		}
		return nil
	}
	return fd
}

// write writes row with the best FeatureRows candidates of the last query.
func (fd *featureDump) write(row FeatureRow) error {
	if fd == nil {
		return nil
	}
	sort.Slice(fd.feats, func(i, j int) bool { return fd.feats[i].Fused > fd.feats[j].Fused })
	row.Cands = fd.feats[:min(len(fd.feats), FeatureRows)]
	if err := fd.enc.Encode(row); err != nil {
		return fmt.Errorf("eval: writing the features: %w", err)
	}
	fd.feats = fd.feats[:0]
	return nil
}

// FeatureRow is one query's candidates under one configuration, as
// Options.Features writes them.
type FeatureRow struct {
	Config   string              `json:"config"`
	ID       string              `json:"id"`
	Set      string              `json:"set,omitempty"`
	Task     string              `json:"task,omitempty"` // agent mode: the task the query is part of
	Relevant []string            `json:"relevant"`
	Groups   [][]string          `json:"groups,omitempty"`
	Cands    []retrieve.Features `json:"cands"`
}

// QueryResult is one query's ranking under one configuration, as
// Options.PerQuery writes it.
type QueryResult struct {
	Config   string   `json:"config"`
	ID       string   `json:"id"`
	Set      string   `json:"set,omitempty"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
	Ranked   []string `json:"ranked"`
}

// Report is the outcome of one configuration on one dataset.
type Report struct {
	Dataset      string        `json:"dataset"`
	Config       string        `json:"config"`
	Tools        int           `json:"tools"`
	rank.Metrics               // quality figures
	LatencyP50   time.Duration `json:"latency_p50_ns"`
	LatencyP99   time.Duration `json:"latency_p99_ns"`
	BuildTime    time.Duration `json:"build_time_ns"` // 0 when NoDense
	Fallbacks    int           `json:"fallbacks"`     // queries answered by the keyword scan
	// BySet breaks the figures down by Query.Set when the queries name
	// sets; Macro is then the unweighted mean over the sets.
	BySet map[string]rank.Metrics `json:"by_set,omitempty"`
	Macro *rank.Metrics           `json:"macro,omitempty"`
}

// env is a loaded dataset: store and built indexes, shared by the
// configurations of an ablation.
type env struct {
	ds      *Dataset
	dir     string
	st      catalog.Store
	topK    int
	indexes map[string]*built // by embedder model id
	// progress receives progress lines (nil: none).
	progress io.Writer
	perQuery *json.Encoder // nil: Options.PerQuery not set
	features *json.Encoder // nil: Options.Features not set
}

type built struct {
	ix        *indexer.Indexer
	buildTime time.Duration
}

func open(ctx context.Context, opts Options) (*env, error) {
	if opts.Dataset == "" {
		return nil, errors.New("eval: Options.Dataset is required")
	}
	ds, err := LoadDataset(opts.Dataset)
	if err != nil {
		return nil, err
	}
	if opts.Limit > 0 && opts.Limit < len(ds.Queries) {
		ds.Queries = ds.Queries[:opts.Limit]
	}
	progress(opts.Progress, "%s: loading %d tools (%d queries)", ds.Name, len(ds.Tools), len(ds.Queries))
	dir, err := os.MkdirTemp("", "toolrag-eval-*")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	st, err := sqlite.Open(ctx, filepath.Join(dir, "catalog.db"))
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("eval: opening the temporary catalog store: %w", err)
	}
	src := opts.Source
	if src == nil {
		src = DirectSource{}
	}
	e := &env{ds: ds, dir: dir, st: st, topK: opts.TopK, indexes: map[string]*built{}, progress: opts.Progress}
	if e.topK <= 0 {
		e.topK = 10
	}
	if opts.PerQuery != nil {
		e.perQuery = json.NewEncoder(opts.PerQuery)
	}
	if opts.Features != nil {
		e.features = json.NewEncoder(opts.Features)
	}
	if err := src.Load(ctx, ds, st); err != nil {
		e.close()
		return nil, err
	}
	return e, nil
}

func (e *env) close() {
	e.st.Close()
	os.RemoveAll(e.dir)
}

func (e *env) index(ctx context.Context, emb embed.Embedder, flat bool) (*built, error) {
	key := emb.ModelID()
	if flat {
		key += " flat"
	}
	if b, ok := e.indexes[key]; ok {
		return b, nil
	}
	ix, err := indexer.New(indexer.Config{Catalog: e.st, Embedder: emb, Flat: flat})
	if err != nil {
		return nil, err
	}
	res, err := ix.Build(ctx, indexer.ModeFull)
	if err != nil {
		return nil, err
	}
	b := &built{ix: ix, buildTime: res.Duration}
	e.indexes[key] = b
	return b, nil
}

// run evaluates one configuration.
func (e *env) run(ctx context.Context, c Config) (Report, error) {
	rep := Report{Dataset: e.ds.Name, Config: c.Name, Tools: len(e.ds.Tools)}
	fd := e.featureDump(&c)
	r, buildTime, err := e.searcher(ctx, c)
	if err != nil {
		return rep, err
	}
	rep.BuildTime = buildTime
	var acc rank.Sum[string]
	bySet := map[string]*rank.Sum[string]{}
	lat := make([]time.Duration, 0, len(e.ds.Queries))
	pol := policy.Unrestricted()
	step := max(1, len(e.ds.Queries)/10)
	for qi, q := range e.ds.Queries {
		if qi > 0 && qi%step == 0 {
			progress(e.progress, "%s: %s: %d/%d queries", e.ds.Name, c.Name, qi, len(e.ds.Queries))
		}
		start := time.Now()
		resp, err := r.Retrieve(ctx, retrieve.Request{Query: q.Query, TopK: e.topK, Policy: pol})
		lat = append(lat, time.Since(start))
		if err != nil {
			return rep, fmt.Errorf("eval: query %s: %w", q.ID, err)
		}
		if resp.FallbackUsed {
			rep.Fallbacks++
		}
		ranked := make([]string, len(resp.Results))
		for i, res := range resp.Results {
			ranked[i] = res.Tool.ID
		}
		acc.Add(ranked, q.Relevant, q.Groups)
		if err := fd.write(FeatureRow{Config: c.Name, ID: q.ID, Set: q.Set, Relevant: q.Relevant, Groups: q.Groups}); err != nil {
			return rep, err
		}
		if e.perQuery != nil {
			if err := e.perQuery.Encode(QueryResult{Config: c.Name, ID: q.ID, Set: q.Set, Query: q.Query, Relevant: q.Relevant, Ranked: ranked}); err != nil {
				return rep, fmt.Errorf("eval: writing the per-query results: %w", err)
			}
		}
		if q.Set != "" {
			a := bySet[q.Set]
			if a == nil {
				a = &rank.Sum[string]{}
				bySet[q.Set] = a
			}
			a.Add(ranked, q.Relevant, q.Groups)
		}
	}
	rep.Metrics = acc.Result()
	if len(bySet) > 0 {
		rep.BySet = map[string]rank.Metrics{}
		for name, a := range bySet {
			rep.BySet[name] = a.Result()
		}
		m := rank.Macro(rep.BySet)
		rep.Macro = &m
	}
	rep.LatencyP50 = percentile(lat, 50)
	rep.LatencyP99 = percentile(lat, 99)
	return rep, nil
}

// searcher returns the ranking of configuration c over the loaded catalog
// (a synced *retrieve.Retriever, or the plain BM25 baseline) and the
// index build time.
func (e *env) searcher(ctx context.Context, c Config) (retrieve.Searcher, time.Duration, error) {
	if c.PlainBM25 {
		return newPlainBM25(e.ds.Tools), 0, nil
	}
	emb := c.Embedder
	if emb == nil {
		emb = embed.NewBuiltin()
	}
	rc := retrieve.Config{Tools: e.st, Reranker: c.Reranker, Experimental: c.Experimental}
	var buildTime time.Duration
	if !c.NoDense {
		b, err := e.index(ctx, emb, c.FlatIndex)
		if err != nil {
			return nil, 0, err
		}
		rc.Index, rc.Embedder = b.ix, emb
		buildTime = b.buildTime
	}
	r, err := retrieve.New(rc)
	if err != nil {
		return nil, 0, err
	}
	if err := r.Sync(ctx); err != nil {
		return nil, 0, err
	}
	if c.CallSequences != nil {
		r.SetCallSequences(c.CallSequences)
	}
	return r, buildTime, nil
}

// Run evaluates opts.Config on opts.Dataset and prints the report to w.
func Run(ctx context.Context, opts Options, w io.Writer) (Report, error) {
	e, err := open(ctx, opts)
	if err != nil {
		return Report{}, err
	}
	defer e.close()
	c := opts.Config
	if c.Name == "" {
		c.Name = "hybrid"
	}
	rep, err := e.run(ctx, c)
	if err != nil {
		return rep, err
	}
	if w != nil {
		PrintReports(w, []Report{rep})
	}
	return rep, nil
}

// Ablation evaluates each configuration on opts.Dataset (loading the
// catalog and building each embedder's index once) and prints a table.
func Ablation(ctx context.Context, opts Options, configs []Config, w io.Writer) ([]Report, error) {
	if len(configs) == 0 {
		configs = DefaultAblation()
	}
	e, err := open(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var out []Report
	for i, c := range configs {
		progress(opts.Progress, "%s: configuration %d/%d: %s", e.ds.Name, i+1, len(configs), c.Name)
		rep, err := e.run(ctx, c)
		if err != nil {
			return out, fmt.Errorf("eval: configuration %q: %w", c.Name, err)
		}
		out = append(out, rep)
	}
	if w != nil {
		PrintReports(w, out)
	}
	return out, nil
}

// DefaultAblation is the comparison recorded in docs/retrieval.md.
// "hybrid" is the retriever's default configuration with the default
// (builtin) embedder; "flat" rows turn the server-level term off; rows
// named hashing-* use the hashing embedder (embed.NewHashing) and model-*
// the built-in model alone (no hashing features), when it loads.
func DefaultAblation() []Config {
	semOnly := retrieve.Weights{Semantic: 1}
	ref := retrieve.Weights{Semantic: 1, Keyword: 0.25, Metadata: 0.15} // the reference formula
	hashing := embed.NewHashing()
	rows := []Config{
		{Name: "bm25f-flat", NoDense: true, Experimental: retrieve.Experimental{ServerWeight: -1}},
		{Name: "bm25f", NoDense: true},
		{Name: "hashing-dense-flat", Embedder: hashing, Experimental: retrieve.Experimental{Weights: semOnly, ServerWeight: -1}},
	}
	model, err := embed.NewBuiltinWith(embed.BuiltinConfig{HashWeight: -1})
	if err == nil {
		rows = append(rows, Config{Name: "model-dense-flat", Embedder: model, Experimental: retrieve.Experimental{Weights: semOnly, ServerWeight: -1}})
	}
	rows = append(rows,
		Config{Name: "dense-flat", Experimental: retrieve.Experimental{Weights: semOnly, ServerWeight: -1}},
		Config{Name: "hybrid-flat", Experimental: retrieve.Experimental{ServerWeight: -1}},
		Config{Name: "hybrid"},
		Config{Name: "hybrid-wholeonly", Experimental: retrieve.Experimental{SemanticWholeOnly: true}},
		Config{Name: "hybrid-rrf", Experimental: retrieve.Experimental{Fusion: retrieve.FusionRRF}},
		Config{Name: "hybrid-ref", Experimental: retrieve.Experimental{Weights: ref, SemanticNorm: retrieve.NormNone}},
		Config{Name: "hashing-hybrid-ref", Embedder: hashing, Experimental: retrieve.Experimental{Weights: ref, SemanticNorm: retrieve.NormNone}},
	)
	if model != nil {
		rows = append(rows, Config{Name: "model-hybrid", Embedder: model})
	}
	rows = append(rows,
		Config{Name: "hybrid+decompose", Experimental: retrieve.Experimental{Decompose: true}},
		Config{Name: "hybrid+decompose(max)", Experimental: retrieve.Experimental{Decompose: true, Merge: retrieve.MergeMax}},
		Config{Name: "hybrid+decompose(rrf)", Experimental: retrieve.Experimental{Decompose: true, Merge: retrieve.MergeRRF}},
		Config{Name: "hybrid+prf", Experimental: retrieve.Experimental{PRF: true}},
		Config{Name: "hybrid+synonyms", Experimental: retrieve.Experimental{Synonyms: true}},
	)
	return rows
}

// PrintReports writes reports as an aligned table.
func PrintReports(w io.Writer, reps []Report) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join([]string{"dataset", "config", "R@1", "R@5", "R@10", "gR@5", "gR@10", "nDCG@10", "MRR", "hit@5", "p50", "p99", "build", ""}, "\t"))
	for _, r := range reps {
		g5, g10 := "-", "-"
		if r.GroupQueries > 0 {
			g5, g10 = f3(r.GroupRecall5), f3(r.GroupRecall10)
		}
		build := "-"
		if r.BuildTime > 0 {
			build = r.BuildTime.Round(time.Millisecond).String()
		}
		fmt.Fprintln(tw, strings.Join([]string{r.Dataset, r.Config, f3(r.RecallAt1), f3(r.RecallAt5), f3(r.RecallAt10),
			g5, g10, f3(r.NDCG10), f3(r.MRR), f3(r.HitAt5),
			dur(r.LatencyP50), dur(r.LatencyP99), build, ""}, "\t"))
		if m := r.Macro; m != nil {
			g5, g10 := "-", "-"
			if m.GroupQueries > 0 {
				g5, g10 = f3(m.GroupRecall5), f3(m.GroupRecall10)
			}
			fmt.Fprintln(tw, strings.Join([]string{r.Dataset + "(macro)", r.Config, f3(m.RecallAt1), f3(m.RecallAt5), f3(m.RecallAt10),
				g5, g10, f3(m.NDCG10), f3(m.MRR), f3(m.HitAt5), "", "", "", ""}, "\t"))
		}
	}
	tw.Flush()
}

func f3(f float64) string { return fmt.Sprintf("%.3f", f) }

func dur(d time.Duration) string {
	return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
}

// progress writes one progress line to w (nil: nowhere).
func progress(w io.Writer, format string, a ...any) {
	if w != nil {
		fmt.Fprintf(w, "eval: "+format+"\n", a...)
	}
}
