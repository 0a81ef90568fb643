package embed

import (
	"bufio"
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// Retrieval quality of the builtin embedder on public (query, tool) sets.
// The weights were chosen on ../shared/train only; ../shared/bench is only
// measured (BenchmarkBuiltinQualityBench), never tuned on.

type evalTool struct {
	ID          string          `json:"id"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type evalQuery struct {
	Query    string     `json:"query"`
	ToolIDs  []string   `json:"tool_ids"`
	Relevant []string   `json:"relevant"`
	Groups   [][]string `json:"relevant_groups"`
}

type evalSet struct {
	tools   []evalTool
	queries []evalQuery
}

func readJSONL[T any](t testing.TB, path string, limit int) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() && (limit <= 0 || len(out) < limit) {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return out
}

func loadEvalSet(t testing.TB, dir string, queryFile string, limit int) evalSet {
	s := evalSet{
		tools:   readJSONL[evalTool](t, filepath.Join(dir, "tools.jsonl"), 0),
		queries: readJSONL[evalQuery](t, filepath.Join(dir, queryFile), limit),
	}
	for i := range s.queries {
		if len(s.queries[i].ToolIDs) == 0 {
			s.queries[i].ToolIDs = s.queries[i].Relevant
		}
	}
	return s
}

// toolText approximates the document the retriever embeds: name (as is
// and split), server, description, parameter names and descriptions.
func toolText(tl evalTool) string {
	var b strings.Builder
	b.WriteString(tl.Name)
	b.WriteString(" (")
	b.WriteString(strings.Join(catalog.SplitName(tl.Name), " "))
	b.WriteString(")")
	if tl.Server != "" {
		b.WriteString(" server ")
		b.WriteString(tl.Server)
	}
	b.WriteString(". ")
	b.WriteString(tl.Description)
	var schema struct {
		Properties map[string]struct {
			Description string `json:"description"`
		} `json:"properties"`
	}
	if json.Unmarshal(tl.InputSchema, &schema) == nil && len(schema.Properties) > 0 {
		names := make([]string, 0, len(schema.Properties))
		for n := range schema.Properties {
			names = append(names, n)
		}
		sort.Strings(names)
		b.WriteString(" Parameters:")
		for _, n := range names {
			b.WriteString(" ")
			b.WriteString(n)
			if d := schema.Properties[n].Description; d != "" {
				b.WriteString(": ")
				b.WriteString(d)
				b.WriteString(";")
			}
		}
	}
	return b.String()
}

type evalScores struct {
	recall5, mrr10, groupRecall5 float64
	n                            int
}

func evaluate(t testing.TB, e Embedder, s evalSet) evalScores {
	t.Helper()
	ctx := context.Background()
	docs := make([]string, len(s.tools))
	for i, tl := range s.tools {
		docs[i] = toolText(tl)
	}
	vecs, err := e.EmbedDocuments(ctx, docs)
	if err != nil {
		t.Fatal(err)
	}
	var sc evalScores
	scores := make([]float64, len(vecs))
	order := make([]int, len(vecs))
	for _, q := range s.queries {
		if len(q.ToolIDs) == 0 {
			continue
		}
		qv, err := e.EmbedQuery(ctx, q.Query)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range vecs {
			scores[i] = float64(dot(qv, v))
			order[i] = i
		}
		sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
		rel := map[string]bool{}
		for _, id := range q.ToolIDs {
			rel[id] = true
		}
		found := 0
		for r, i := range order[:min(10, len(order))] {
			if rel[s.tools[i].ID] {
				if r < 5 {
					found++
				}
			}
		}
		for r, i := range order[:min(10, len(order))] {
			if rel[s.tools[i].ID] {
				sc.mrr10 += 1 / float64(r+1)
				break
			}
		}
		sc.recall5 += float64(found) / float64(min(len(rel), 5))
		if len(q.Groups) > 0 {
			top := map[string]bool{}
			for _, i := range order[:min(5, len(order))] {
				top[s.tools[i].ID] = true
			}
			g := 0
			for _, grp := range q.Groups {
				for _, id := range grp {
					if top[id] {
						g++
						break
					}
				}
			}
			sc.groupRecall5 += float64(g) / float64(len(q.Groups))
		}
		sc.n++
	}
	if sc.n > 0 {
		sc.recall5 /= float64(sc.n)
		sc.mrr10 /= float64(sc.n)
		sc.groupRecall5 /= float64(sc.n)
	}
	return sc
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// bagOfWords is the baseline the builtin embedder must beat: hashed
// lower-cased words, no stemming, no n-grams, raw term frequency.
type bagOfWords struct{}

func (bagOfWords) Dim() int        { return BuiltinDim }
func (bagOfWords) ModelID() string { return "bow" }
func (w bagOfWords) EmbedQuery(_ context.Context, s string) ([]float32, error) {
	v := make([]float32, BuiltinDim)
	for _, f := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 127)
	}) {
		idx, sign := slot(hashString(seedWord, f))
		v[idx] += sign
	}
	vindex.Normalize(v)
	return v, nil
}
func (w bagOfWords) EmbedDocuments(ctx context.Context, ss []string) ([][]float32, error) {
	out := make([][]float32, len(ss))
	for i, s := range ss {
		out[i], _ = w.EmbedQuery(ctx, s)
	}
	return out, nil
}

var trainSets = []struct {
	dir   string
	limit int
}{
	{"restbench", 0},
	{"apibank", 0},
	{"toolalpaca", 0},
	{"sealtools", 200},
	{"nestful", 0},
	{"metatool", 300},
	{"hwu64", 300},
	{"gorilla_apibench", 200},
}

// TestBuiltinBeatsBagOfWords checks, on the public training sets, that the
// builtin embedder retrieves the right tools more often than plain hashed
// bag of words (the floor it is meant to clear).
func TestBuiltinBeatsBagOfWords(t *testing.T) {
	shared := testenv.SharedDir(t)
	if testing.Short() {
		t.Skip("reads the training sets")
	}
	b := NewHashing()
	var sumB, sumW float64
	for _, ts := range trainSets {
		dir := filepath.Join(shared, "train", ts.dir)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		s := loadEvalSet(t, dir, "pairs.jsonl", ts.limit)
		sb := evaluate(t, b, s)
		sw := evaluate(t, bagOfWords{}, s)
		t.Logf("%-17s n=%4d tools=%5d  builtin R@5 %.3f MRR@10 %.3f | bow R@5 %.3f MRR@10 %.3f",
			ts.dir, sb.n, len(s.tools), sb.recall5, sb.mrr10, sw.recall5, sw.mrr10)
		sumB += sb.recall5
		sumW += sw.recall5
	}
	if sumB <= sumW {
		t.Errorf("builtin mean Recall@5 %.3f does not beat bag of words %.3f", sumB/float64(len(trainSets)), sumW/float64(len(trainSets)))
	}
	t.Logf("mean R@5 builtin %.3f, bow %.3f", sumB/float64(len(trainSets)), sumW/float64(len(trainSets)))
}

// BenchmarkBuiltinQualityBench reports Recall@5 on the evaluation sets in
// ../shared/bench as custom metrics (measured only; nothing is tuned on it).
func BenchmarkBuiltinQualityBench(b *testing.B) {
	shared := testenv.SharedDir(b)
	for _, name := range []string{"livemcpbench", "stabletoolbench"} {
		dir := filepath.Join(shared, "bench", name)
		if _, err := os.Stat(dir); err != nil {
			continue
		}
		s := loadEvalSet(b, dir, "queries.jsonl", 0)
		b.Run(name, func(b *testing.B) {
			var sc evalScores
			for i := 0; i < b.N; i++ {
				sc = evaluate(b, NewHashing(), s)
			}
			b.ReportMetric(sc.recall5, "R@5")
			if sc.groupRecall5 > 0 {
				b.ReportMetric(sc.groupRecall5, "groupR@5")
			}
			b.ReportMetric(sc.mrr10, "MRR@10")
			bw := evaluate(b, bagOfWords{}, s)
			b.ReportMetric(bw.recall5, "bowR@5")
			if math.IsNaN(sc.recall5) {
				b.Fatal("NaN recall")
			}
		})
	}
}
