package eval

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestPercentile(t *testing.T) {
	var ds []time.Duration
	for i := 1; i <= 100; i++ {
		ds = append(ds, time.Duration(101-i)*time.Millisecond)
	}
	if p := percentile(ds, 50); p != 50*time.Millisecond {
		t.Errorf("p50 = %v", p)
	}
	if p := percentile(ds, 99); p != 99*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	if p := percentile(nil, 50); p != 0 {
		t.Errorf("empty p50 = %v", p)
	}
}

const synthetic = "../../pkg/retrieve/testdata/synthetic"

// TestRunSynthetic runs the whole pipeline (SQLite store, indexer, retriever)
// on the hand-written catalog, where every relevant tool must be found.
func TestRunSynthetic(t *testing.T) {
	var out bytes.Buffer
	rep, err := Run(context.Background(), Options{Dataset: synthetic, TopK: 5,
		Config: Config{Name: "full", Experimental: retrieve.Experimental{ServerWeight: 0.3, Decompose: true}}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Queries != 23 || rep.Tools != 40 || rep.Dataset != "synthetic" {
		t.Errorf("report = %+v", rep)
	}
	if rep.RecallAt5 != 1 || rep.GroupRecall5 != 1 || rep.HitAt5 != 1 {
		t.Errorf("recall@5 = %v, group recall@5 = %v: every relevant tool should be in the top 5", rep.RecallAt5, rep.GroupRecall5)
	}
	if rep.RecallAt1 < 0.9 || rep.MRR < 0.9 {
		t.Errorf("recall@1 = %v, MRR = %v", rep.RecallAt1, rep.MRR)
	}
	if rep.BuildTime <= 0 || rep.Fallbacks != 0 || rep.LatencyP50 <= 0 || rep.LatencyP99 < rep.LatencyP50 {
		t.Errorf("report = %+v", rep)
	}
	if !strings.Contains(out.String(), "synthetic") || !strings.Contains(out.String(), "nDCG@10") {
		t.Errorf("printed report:\n%s", out.String())
	}
}

func TestAblationSynthetic(t *testing.T) {
	reps, err := Ablation(context.Background(), Options{Dataset: synthetic, Limit: 5}, []Config{
		{Name: "bm25f", NoDense: true},
		{Name: "hybrid"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 || reps[0].Queries != 5 {
		t.Fatalf("reports = %+v", reps)
	}
	if reps[0].Fallbacks != 5 || reps[0].BuildTime != 0 {
		t.Errorf("bm25f alone should answer every query by the keyword scan: %+v", reps[0])
	}
	if reps[1].Fallbacks != 0 {
		t.Errorf("hybrid used the fallback: %+v", reps[1])
	}
}

func TestLoadDatasetErrors(t *testing.T) {
	good := `{"id":"s__t","server":"s","name":"t","description":"d"}`
	tests := []struct {
		name, tools, queries, want string
	}{
		{"missing files", "", "", "no such file"},
		{"bad json", "{", `{"id":"q","query":"x","relevant":["s__t"]}`, "tools.jsonl line 1"},
		{"bad server id", `{"server":"a b","name":"t"}`, "", "must match"},
		{"id mismatch", `{"id":"s__u","server":"s","name":"t"}`, "", "is not server__name"},
		{"duplicate", good + "\n" + good, "", "duplicate tool id"},
		{"unknown relevant", good, `{"id":"q","query":"x","relevant":["s__nope"]}`, "not in tools.jsonl"},
		{"no relevant", good, `{"id":"q","query":"x","relevant":[]}`, "are required"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if tt.tools != "" {
				os.WriteFile(filepath.Join(dir, "tools.jsonl"), []byte(tt.tools+"\n"), 0o644)
				os.WriteFile(filepath.Join(dir, "queries.jsonl"), []byte(tt.queries+"\n"), 0o644)
			}
			_, err := LoadDataset(dir)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}
