package eval_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/lab/eval"
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
