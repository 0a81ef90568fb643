package eval

import (
	"encoding/json"
	"flag"
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// TestFitScorer: when relevance follows a signal the fusion score
// underweighs, the fitted scorer ranks better than the fusion on rows it
// was not fitted on, and Rerank with no scorer reproduces the fusion.
func TestFitScorer(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	mk := func(n int) []FeatureRow {
		var rows []FeatureRow
		for q := range n {
			r := FeatureRow{ID: fmt.Sprint(q), Set: "s"}
			rel := rng.Intn(20)
			for i := range 20 {
				f := retrieve.Features{ToolID: fmt.Sprintf("s__t%d", i), Fused: rng.Float64(), Coverage: rng.Float64() * 0.5, QueryTerms: 3}
				if i == rel {
					f.Coverage, f.Fused = 1, f.Fused*0.8
					r.Relevant = []string{f.ToolID}
				}
				r.Cands = append(r.Cands, f)
			}
			rows = append(rows, r)
		}
		return rows
	}
	train, test := mk(300), mk(200)
	for _, hidden := range []int{0, 4} {
		m, err := FitScorer(train, FitOptions{Hidden: hidden})
		if err != nil {
			t.Fatal(err)
		}
		base, fit := Rerank(test, nil), Rerank(test, m.Score)
		if base.Task.Queries != 200 || fit.Task.RecallAt5 < base.Task.RecallAt5+0.3 || fit.Task.RecallAt5 < 0.95 {
			t.Errorf("hidden %d: fitted R@5 %.3f, fusion %.3f over %d queries", hidden, fit.Task.RecallAt5, base.Task.RecallAt5, base.Task.Queries)
		}
	}
	if _, err := FitScorer([]FeatureRow{{Relevant: []string{"x__y"}, Cands: test[0].Cands}}, FitOptions{}); err == nil {
		t.Error("fitting rows without a relevant candidate: no error")
	}
}

// TestRerankAgent: agent rows are scored as the union of each capability
// query's top 5 over its task, skipping tools already found.
func TestRerankAgent(t *testing.T) {
	cands := func(ids ...string) []retrieve.Features {
		var out []retrieve.Features
		for i, id := range ids {
			out = append(out, retrieve.Features{ToolID: id, Fused: float64(len(ids) - i)})
		}
		return out
	}
	rows := []FeatureRow{
		{ID: "t#0", Task: "t", Relevant: []string{"a__1", "a__7"}, Cands: cands("a__1", "a__2", "a__3", "a__4", "a__5", "a__6")},
		// a__1..a__5 are found; the second query's top 5 skips them and
		// stops at a__12, before a__7.
		{ID: "t#1", Task: "t", Relevant: []string{"a__1", "a__7"}, Cands: cands("a__1", "a__2", "a__3", "a__4", "a__5", "a__8", "a__9", "a__10", "a__11", "a__12", "a__7")},
	}
	if got := Rerank(rows, nil); got.AgentTasks != 1 || got.AgentRecall != 0.5 {
		t.Fatalf("agent figures %+v, want recall 0.5 over 1 task", got)
	}
	rows[1].Cands = cands("a__1", "a__2", "a__3", "a__4", "a__5", "a__8", "a__9", "a__10", "a__11", "a__7")
	if got := Rerank(rows, nil); got.AgentRecall != 1 {
		t.Fatalf("agent recall %.2f, want 1 (a__7 is the 5th new tool)", got.AgentRecall)
	}
}

var (
	fitTrain  = flag.String("eval.fit.train", "", "fit a learned scorer on this feature dump (-eval.features) and report it on -eval.fit.eval")
	fitSplit  = flag.Bool("eval.fit.split", false, "with -eval.fit.train: fit on the queries of half the servers (by hash), report the other half as held out")
	fitEval   = flag.String("eval.fit.eval", "", "comma-separated name=path feature dumps to report the fitted scorer on")
	fitHidden = flag.Int("eval.fit.hidden", 0, "tanh units of the learned scorer (0: linear)")
	fitOut    = flag.String("eval.fit.out", "", "write the fitted scorer (JSON) here, for the \"ScorerFile\" of -eval.json")
)

// TestFitScorerDumps fits and reports a learned scorer on real feature
// dumps (docs/retrieval.md, "Sixth pass").
func TestFitScorerDumps(t *testing.T) {
	if *fitTrain == "" {
		t.Skip("set -eval.fit.train")
	}
	rows, err := ReadFeatureRows(*fitTrain)
	if err != nil {
		t.Fatal(err)
	}
	sets := map[string][]FeatureRow{}
	var names []string
	if *fitSplit {
		var a, b []FeatureRow
		for _, r := range rows {
			h := fnv.New32a()
			srv, _, _ := strings.Cut(r.Relevant[0], "__")
			h.Write([]byte(srv))
			if h.Sum32()%2 == 0 {
				a = append(a, r)
			} else {
				b = append(b, r)
			}
		}
		rows = a
		sets["train half"], sets["held-out half"] = a, b
		names = append(names, "train half", "held-out half")
	}
	for _, kv := range strings.Split(*fitEval, ",") {
		if kv == "" {
			continue
		}
		name, path, ok := strings.Cut(kv, "=")
		if !ok {
			name, path = strings.TrimSuffix(filepath.Base(kv), ".jsonl"), kv
		}
		rs, err := ReadFeatureRows(path)
		if err != nil {
			t.Fatal(err)
		}
		sets[name] = rs
		names = append(names, name)
	}
	m, err := FitScorer(rows, FitOptions{Hidden: *fitHidden})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "linear weights: %.3f\n", m.W)
	if *fitOut != "" {
		b, _ := json.Marshal(m)
		if err := os.WriteFile(*fitOut, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Fprintf(os.Stdout, "%-16s %-8s %8s %8s %8s\n", "set", "scorer", "R@5", "nDCG@10", "agent")
	for _, n := range names {
		for _, s := range []struct {
			name string
			fn   func([]retrieve.Features) []float64
		}{{"fusion", nil}, {"learned", m.Score}} {
			f := Rerank(sets[n], s.fn)
			agent := "-"
			if f.AgentTasks > 0 {
				agent = fmt.Sprintf("%.3f", f.AgentRecall)
			}
			fmt.Fprintf(os.Stdout, "%-16s %-8s %8.3f %8.3f %8s\n", n, s.name, f.Task.RecallAt5, f.Task.NDCG10, agent)
		}
	}
}
