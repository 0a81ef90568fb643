package eval

import (
	"context"
	"encoding/json"
	"flag"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

var (
	benchSets    = flag.Bool("eval.bench", false, "run the ablation on ../shared/bench/{livemcpbench,stabletoolbench}")
	benchNames   = flag.String("eval.sets", "livemcpbench,stabletoolbench", "comma-separated benchmark folders under ../shared/bench")
	benchConfigs = flag.String("eval.configs", "", "comma-separated configuration names of DefaultAblation (empty: all)")
	devSet       = flag.Bool("eval.dev", false, "run the ablation on the DEV set made from ../shared/train (FromTrainingSet)")
	devHoldOut   = flag.Float64("eval.dev.holdout", 0, "with -eval.dev: share of labelled tools whose pairs become queries (default 0.1, lab/train's split; 1: all pairs)")
	devQueries   = flag.String("eval.dev.queries", "", "with -eval.dev: comma-separated training datasets the queries come from (default all)")
	devBySet     = flag.Bool("eval.byset", false, "with -eval.dev: also print the figures of each training dataset")
	featuresOut  = flag.String("eval.features", "", "write the ranking features of every query's best candidates to this JSONL file (eval.FeatureRow)")
	perQueryOut  = flag.String("eval.perquery", "", "write every query's ranking of every configuration to this JSONL file (eval.QueryResult)")
	extraConfigs = flag.String("eval.json", "", `extra configurations as JSON, e.g. [{"Name":"kw0.5","Weights":{"Semantic":1,"Keyword":0.5}}]; "Embedder":"hashing" picks the hashing embedder`)
)

// jsonConfig is Config in a form the -eval.json flag can carry.
type jsonConfig struct {
	Config
	// Embedder: "" (the builtin default), "hashing", "model" (the built-in
	// model alone), "fused:<w>" (the default with the hashing features at
	// weight w), "dir:<model dir>" (a model alone) or
	// "fuseddir:<w>:<model dir>[:<distilled dir>]" (a model + hashing
	// features at weight w [+ a distilled table]), "record:<file>" or
	// "teacher:<w>:<vectors file>" (teacher_test.go).
	Embedder string
	// ScorerFile is a learned scorer (-eval.fit.out) to rank with.
	ScorerFile string
}

func selectedConfigs(t *testing.T) []Config {
	t.Helper()
	var configs []Config
	for _, c := range DefaultAblation() {
		if *benchConfigs == "" || slices.Contains(strings.Split(*benchConfigs, ","), c.Name) {
			configs = append(configs, c)
		}
	}
	if *extraConfigs != "" {
		var extra []jsonConfig
		if err := json.Unmarshal([]byte(*extraConfigs), &extra); err != nil {
			t.Fatalf("-eval.json: %v", err)
		}
		for _, e := range extra {
			c := e.Config
			if e.ScorerFile != "" {
				b, err := os.ReadFile(e.ScorerFile)
				if err != nil {
					t.Fatal(err)
				}
				var m LearnedScorer
				if err := json.Unmarshal(b, &m); err != nil {
					t.Fatalf("%s: %v", e.ScorerFile, err)
				}
				c.Scorer = m.Score
			}
			if emb, ok := outsideEmbedder(t, e.Embedder); ok {
				c.Embedder = emb
				configs = append(configs, c)
				continue
			}
			switch {
			case e.Embedder == "":
			case e.Embedder == "hashing":
				c.Embedder = embed.NewHashing()
			case e.Embedder == "model":
				emb, err := embed.NewBuiltinWith(embed.BuiltinConfig{HashWeight: -1})
				if err != nil {
					t.Fatal(err)
				}
				c.Embedder = emb
			case strings.HasPrefix(e.Embedder, "dir:"), strings.HasPrefix(e.Embedder, "fuseddir:"):
				// dir:<model dir> or fuseddir:<w>:<model dir>[:<distilled dir>]
				w, path, distilledDir := -1.0, strings.TrimPrefix(e.Embedder, "dir:"), ""
				if rest, ok := strings.CutPrefix(e.Embedder, "fuseddir:"); ok {
					ws, p, _ := strings.Cut(rest, ":")
					var err error
					if w, err = strconv.ParseFloat(ws, 64); err != nil {
						t.Fatalf("-eval.json: %v", err)
					}
					path, distilledDir, _ = strings.Cut(p, ":")
				}
				m, err := model2vec.LoadDir(path)
				if err != nil {
					t.Fatal(err)
				}
				cfg := embed.BuiltinConfig{Model: m, HashWeight: w}
				if distilledDir != "" {
					d, err := model2vec.LoadDir(distilledDir)
					if err != nil {
						t.Fatal(err)
					}
					cfg.Distilled = d
				}
				emb, err := embed.NewBuiltinWith(cfg)
				if err != nil {
					t.Fatal(err)
				}
				c.Embedder = emb
			case strings.HasPrefix(e.Embedder, "fused:"):
				w, err := strconv.ParseFloat(strings.TrimPrefix(e.Embedder, "fused:"), 64)
				if err != nil {
					t.Fatalf("-eval.json: %v", err)
				}
				emb, err := embed.NewBuiltinWith(embed.BuiltinConfig{HashWeight: w})
				if err != nil {
					t.Fatal(err)
				}
				c.Embedder = emb
			default:
				t.Fatalf("-eval.json: unknown embedder %q (want hashing, model or fused:<hash weight>)", e.Embedder)
			}
			configs = append(configs, c)
		}
	}
	if len(configs) == 0 {
		t.Fatalf("no configuration named in -eval.configs=%s", *benchConfigs)
	}
	return configs
}

var _ = retrieve.FusionRRF

// TestBenchSets prints the ablation table on the shared benchmark sets. It
// only measures (no assertion on the figures): run with
//
//	go test ./lab/eval -run TestBenchSets -v -timeout 60m -args -eval.bench
func TestBenchSets(t *testing.T) {
	if !*benchSets {
		t.Skip("pass -args -eval.bench to run the benchmark sets")
	}
	shared := testenv.SharedDir(t)
	configs := selectedConfigs(t)
	for _, name := range strings.Split(*benchNames, ",") {
		if _, err := Ablation(context.Background(), Options{Dataset: filepath.Join(shared, "bench", name)}, configs, os.Stdout); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDevSet prints the ablation table on the DEV set: the held-out pairs
// of ../shared/train (the validation split of lab/train) over the merged
// catalog of every training dataset. Model selection and weight tuning use
// this set, never the benchmark sets. Run with
//
//	go test ./lab/eval -run TestDevSet -v -timeout 60m -args -eval.dev
func TestDevSet(t *testing.T) {
	if !*devSet {
		t.Skip("pass -args -eval.dev to run the DEV set")
	}
	shared := testenv.SharedDir(t)
	dir := filepath.Join(t.TempDir(), "dev")
	opts := TrainingSetOptions{HoldOut: *devHoldOut}
	if *devQueries != "" {
		opts.QueryDatasets = strings.Split(*devQueries, ",")
	}
	info, err := FromTrainingSet(filepath.Join(shared, "train"), dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("DEV set: %d tools, %d servers, %d queries %v", info.Tools, info.Servers, info.Queries, info.ByDataset)
	reps, err := Ablation(context.Background(), Options{Dataset: dir, PerQuery: perQuery(t), Features: featuresFile(t)}, selectedConfigs(t), os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	printBySet(reps)
}

// printBySet prints each report's per-set rows with -eval.byset.
func printBySet(reps []Report) {
	if !*devBySet {
		return
	}
	for _, r := range reps {
		var rows []Report
		for _, n := range slices.Sorted(maps.Keys(r.BySet)) {
			rows = append(rows, Report{Dataset: n, Config: r.Config, Metrics: r.BySet[n]})
		}
		PrintReports(os.Stdout, rows)
	}
}

// featuresFile opens -eval.features (nil when unset).
func featuresFile(t *testing.T) io.Writer { return outputFile(t, *featuresOut) }

// perQuery opens -eval.perquery (nil when unset).
func perQuery(t *testing.T) io.Writer { return outputFile(t, *perQueryOut) }

// outputFile creates path for a test's output (nil when path is empty);
// the file is closed when the test ends.
func outputFile(t *testing.T, path string) io.Writer {
	if path == "" {
		return nil
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}
