package eval_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/lab/eval"
	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/lab/train"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/embed/toolmodel"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// TestBenchHybrid measures the built-in model (or the model directory in
// TOOLRAG_MODEL_DIR) in the gateway's retrieval pipeline on both
// ../shared/bench sets: dense only, and fused with BM25F. Measurement only:
//
//	TOOLRAG_BENCH=1 go test ./lab/eval -run TestBenchHybrid -v -timeout 60m
func TestBenchHybrid(t *testing.T) {
	if os.Getenv("TOOLRAG_BENCH") != "1" {
		t.Skip("set TOOLRAG_BENCH=1 to measure the model on ../shared/bench")
	}
	var m *model2vec.Model
	var err error
	if dir := os.Getenv("TOOLRAG_MODEL_DIR"); dir != "" {
		m, err = model2vec.LoadDir(dir)
	} else {
		m, err = toolmodel.Load()
	}
	if err != nil {
		t.Fatal(err)
	}
	emb := embed.FromStatic(m)
	configs := []eval.Config{
		{Name: "dense-flat", Embedder: emb, Experimental: retrieve.Experimental{Weights: retrieve.Weights{Semantic: 1}, ServerWeight: -1}},
		{Name: "hybrid-flat", Embedder: emb, Experimental: retrieve.Experimental{ServerWeight: -1}},
		{Name: "hybrid", Embedder: emb},
		{Name: "hybrid-kw1.0", Embedder: emb, Experimental: retrieve.Experimental{Weights: retrieve.Weights{Semantic: 1, Keyword: 1, Metadata: 0.15}}},
	}
	if only := os.Getenv("TOOLRAG_BENCH_CONFIGS"); only != "" {
		var keep []eval.Config
		for _, c := range configs {
			if strings.Contains(","+only+",", ","+c.Name+",") {
				keep = append(keep, c)
			}
		}
		configs = keep
	}
	shared := testenv.SharedDir(t)
	for _, name := range []string{"livemcpbench", "stabletoolbench"} {
		if _, err := eval.Ablation(context.Background(), eval.Options{Dataset: filepath.Join(shared, "bench", name)}, configs, os.Stdout); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBenchTrain trains on ../shared/train and measures dense retrieval on
// the held-out split and on both ../shared/bench sets. It runs only with
// TOOLRAG_BENCH=1 (minutes of CPU). TOOLRAG_TRAIN_OPTS may hold
// train.Options as JSON; TOOLRAG_TRAIN_OUT a folder to write the model to.
func TestBenchTrain(t *testing.T) {
	if os.Getenv("TOOLRAG_BENCH") != "1" {
		t.Skip("set TOOLRAG_BENCH=1 to train and measure on ../shared")
	}
	shared := testenv.SharedDir(t)
	opts := train.Options{TrainDir: filepath.Join(shared, "train")}
	if s := os.Getenv("TOOLRAG_TRAIN_OPTS"); s != "" {
		if err := json.Unmarshal([]byte(s), &opts); err != nil {
			t.Fatal(err)
		}
		opts.TrainDir = filepath.Join(shared, "train")
	}
	opts.OutDir = os.Getenv("TOOLRAG_TRAIN_OUT")
	start := time.Now()
	res, err := train.Train(context.Background(), opts, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trained in %s: vocab %d, best epoch %d, validation %s", time.Since(start).Round(time.Second), res.Vocab, res.BestEpoch, figures(res.Validation))
	benchDense(t, res.Model, shared)
}

// TestBenchModel measures a saved model directory (TOOLRAG_MODEL_DIR),
// dense only.
func TestBenchModel(t *testing.T) {
	dir := os.Getenv("TOOLRAG_MODEL_DIR")
	if os.Getenv("TOOLRAG_BENCH") != "1" || dir == "" {
		t.Skip("set TOOLRAG_BENCH=1 and TOOLRAG_MODEL_DIR to measure a model")
	}
	m, err := model2vec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	benchDense(t, m, testenv.SharedDir(t))
}

func benchDense(t *testing.T, m *model2vec.Model, shared string) {
	for _, name := range []string{"livemcpbench", "stabletoolbench"} {
		got, err := eval.Dense(context.Background(), m, filepath.Join(shared, "bench", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s dense: %s", name, figures(got))
	}
}

func figures(m rank.Metrics) string {
	return fmt.Sprintf("R@1 %.3f R@5 %.3f R@10 %.3f nDCG@10 %.3f hit@5 %.3f (%d queries)",
		m.RecallAt1, m.RecallAt5, m.RecallAt10, m.NDCG10, m.HitAt5, m.Queries)
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}

// TestDense: dense-only retrieval with the builtin model ranks each query's
// tool first on a catalog where the tools are far apart.
func TestDense(t *testing.T) {
	dir := t.TempDir()
	tools := `{"id":"mail__send_email","server":"mail","name":"send_email","description":"Send an email message to a recipient"}
{"id":"weather__get_forecast","server":"weather","name":"get_forecast","description":"Get the weather forecast for a city"}
{"id":"files__delete_file","server":"files","name":"delete_file","description":"Delete a file from the disk"}
`
	queries := `{"query":"email my boss about the meeting","relevant":["mail__send_email"]}
{"query":"will it rain in Paris tomorrow","relevant":["weather__get_forecast"]}
`
	for name, body := range map[string]string{"tools.jsonl": tools, "queries.jsonl": queries} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := toolmodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	got, err := eval.Dense(context.Background(), m, dir)
	if err != nil {
		t.Fatal(err)
	}
	if got.Queries != 2 || got.RecallAt1 != 1 || got.MRR != 1 || got.RecallAt10 != 1 {
		t.Errorf("Dense = %s, MRR %.3f; want every query's tool first", figures(got), got.MRR)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := eval.Dense(ctx, m, dir); err == nil {
		t.Error("Dense with a cancelled context: no error")
	}
}
