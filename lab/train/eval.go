package train

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"

	"github.com/toolrag/mcp-gateway/lab/jsonl"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// Metrics are dense-retrieval figures averaged over queries.
type Metrics struct {
	Queries    int     `json:"queries"`
	RecallAt1  float64 `json:"recall@1"`
	RecallAt5  float64 `json:"recall@5"`
	RecallAt10 float64 `json:"recall@10"`
	NDCG10     float64 `json:"ndcg@10"`
	HitAt5     float64 `json:"hit@5"`
}

func (m Metrics) String() string {
	return fmt.Sprintf("R@1 %.3f R@5 %.3f R@10 %.3f nDCG@10 %.3f hit@5 %.3f (%d queries)",
		m.RecallAt1, m.RecallAt5, m.RecallAt10, m.NDCG10, m.HitAt5, m.Queries)
}

type metricSum struct{ m Metrics }

// add scores one ranking (best first) against the relevant ids.
func (s *metricSum) add(ranked []int, relevant map[int]bool) {
	if len(relevant) == 0 {
		return
	}
	s.m.Queries++
	var f1, f5, f10 int
	var dcg, idcg float64
	for i, id := range ranked {
		if i >= 10 {
			break
		}
		if relevant[id] {
			if i < 1 {
				f1++
			}
			if i < 5 {
				f5++
			}
			f10++
			dcg += 1 / math.Log2(float64(i)+2)
		}
	}
	for i := 0; i < len(relevant) && i < 10; i++ {
		idcg += 1 / math.Log2(float64(i)+2)
	}
	n := float64(len(relevant))
	s.m.RecallAt1 += float64(f1) / n
	s.m.RecallAt5 += float64(f5) / n
	s.m.RecallAt10 += float64(f10) / n
	s.m.NDCG10 += dcg / idcg
	if f5 > 0 {
		s.m.HitAt5++
	}
}

func (s *metricSum) result() Metrics {
	m := s.m
	if m.Queries > 0 {
		q := float64(m.Queries)
		m.RecallAt1 /= q
		m.RecallAt5 /= q
		m.RecallAt10 /= q
		m.NDCG10 /= q
		m.HitAt5 /= q
	}
	return m
}

// topK returns the indexes of the k largest scores (ties by index).
func topK(scores []float32, k int) []int {
	return topKFunc(len(scores), k, func(i int) float64 { return float64(scores[i]) })
}

// topKFunc selects the k best of n items by score (ties by lower index)
// with a bounded insertion list: O(n·k) worst case, O(n) typically.
func topKFunc(n, k int, score func(int) float64) []int {
	if k <= 0 {
		return nil
	}
	idx := make([]int, 0, k+1)
	sc := make([]float64, 0, k+1)
	for i := 0; i < n; i++ {
		s := score(i)
		if len(idx) == k && s <= sc[k-1] {
			continue
		}
		p := len(idx)
		for p > 0 && sc[p-1] < s {
			p--
		}
		idx = append(idx, 0)
		sc = append(sc, 0)
		copy(idx[p+1:], idx[p:])
		copy(sc[p+1:], sc[p:])
		idx[p], sc[p] = i, s
		if len(idx) > k {
			idx, sc = idx[:k], sc[:k]
		}
	}
	return idx
}

// validate ranks every tool of a validation pair's dataset for its query
// with the current float table. It returns micro-averaged figures over all
// validation queries, the per-dataset figures, and the macro average of
// nDCG@10 over datasets in the first result's NDCG10 field (the model
// selection criterion), so that the big intent sets do not dominate.
func (tr *trainer) validate() (Metrics, map[string]Metrics) {
	D := tr.tab.D
	docs := make([]float32, len(tr.docBags)*D)
	parallel(tr.opts.Threads, len(tr.docBags), func(i int) {
		u := docs[i*D : i*D+D]
		if n := tr.tab.embed(tr.docBags[i], u); n > 0 {
			for j := range u {
				u[j] /= n
			}
		}
	})
	byDS := map[string][]int{}
	for i, t := range tr.corpus.Tools {
		byDS[t.Dataset] = append(byDS[t.Dataset], i)
	}
	rankings := make([][]int, len(tr.val))
	parallel(tr.opts.Threads, len(tr.val), func(qi int) {
		q := make([]float32, D)
		if n := tr.tab.embed(tr.valBags[qi], q); n > 0 && tr.lex != nil {
			for j := range q {
				q[j] /= n
			}
		}
		tools := byDS[tr.val[qi].Dataset]
		scores := make([]float32, len(tools))
		for k, ti := range tools {
			scores[k] = dot(q, docs[ti*D:ti*D+D])
			if tr.lex != nil {
				scores[k] = tr.lex.a*scores[k] + tr.lex.b*tr.lex.val[qi].dot(tr.lex.docs[ti])
			}
		}
		top := topK(scores, 10)
		for k := range top {
			top[k] = tools[top[k]]
		}
		rankings[qi] = top
	})
	sums := map[string]*metricSum{}
	var all metricSum
	for qi, p := range tr.val {
		rel := map[int]bool{}
		for _, id := range p.ToolIDs {
			rel[tr.corpus.byID[id]] = true
		}
		s := sums[p.Dataset]
		if s == nil {
			s = &metricSum{}
			sums[p.Dataset] = s
		}
		s.add(rankings[qi], rel)
		all.add(rankings[qi], rel)
	}
	per := map[string]Metrics{}
	var macro float64
	for ds, s := range sums {
		per[ds] = s.result()
		macro += per[ds].NDCG10
	}
	m := all.result()
	if len(per) > 0 {
		m.NDCG10 = macro / float64(len(per))
	}
	return m, per
}

// Bench is a retrieval benchmark in the ../shared/bench layout: tools.jsonl
// ({"id", "server", "name", "description", "input_schema",
// "server_title", "server_description"}) and queries.jsonl ({"query",
// "relevant": [ids]}).
type Bench struct {
	Name    string
	Tools   []catalog.Tool
	Servers map[string]catalog.Server
	Queries []BenchQuery
}

// BenchQuery is one benchmark query.
type BenchQuery struct {
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// LoadBench reads a benchmark folder.
func LoadBench(dir string) (*Bench, error) {
	b := &Bench{Name: filepath.Base(filepath.Clean(dir)), Servers: map[string]catalog.Server{}}
	seen := map[string]bool{}
	err := jsonl.ReadFile(filepath.Join(dir, "tools.jsonl"), func(_ int, raw []byte) error {
		var tl struct {
			toolLine
			ServerTitle       string `json:"server_title"`
			ServerDescription string `json:"server_description"`
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			return err
		}
		if tl.Server == "" || tl.Name == "" {
			return errors.New(`"server" and "name" are required`)
		}
		if string(tl.InputSchema) == "null" {
			tl.InputSchema = nil
		}
		t := catalog.Tool{ID: tl.ID, Server: tl.Server, Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema}
		catalog.Finalize(&t)
		if seen[t.ID] {
			return fmt.Errorf("duplicate tool id %q", t.ID)
		}
		seen[t.ID] = true
		b.Tools = append(b.Tools, t)
		if _, ok := b.Servers[t.Server]; !ok {
			b.Servers[t.Server] = catalog.Server{ID: t.Server, Title: tl.ServerTitle, Description: tl.ServerDescription}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = jsonl.ReadFile(filepath.Join(dir, "queries.jsonl"), func(_ int, raw []byte) error {
		var q BenchQuery
		if err := json.Unmarshal(raw, &q); err != nil {
			return err
		}
		for _, id := range q.Relevant {
			if !seen[id] {
				return fmt.Errorf("relevant tool %q is not in tools.jsonl", id)
			}
		}
		b.Queries = append(b.Queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// EvalDense measures dense-only retrieval of m on a benchmark folder: every
// tool is embedded as its gateway document (indexer.Document), every query
// ranks all tools by cosine. It is for measurement only; nothing here feeds
// back into training.
func EvalDense(ctx context.Context, m *model2vec.Model, benchDir string) (Metrics, error) {
	b, err := LoadBench(benchDir)
	if err != nil {
		return Metrics{}, fmt.Errorf("train: bench: %w", err)
	}
	return evalBench(ctx, b, func(text string) []float32 { return m.Embed(text) })
}

func evalBench(ctx context.Context, b *Bench, embed func(string) []float32) (Metrics, error) {
	docs := make([][]float32, len(b.Tools))
	index := map[string]int{}
	for i, t := range b.Tools {
		docs[i] = embed(indexer.Document(t, b.Servers[t.Server]))
		index[t.ID] = i
	}
	var s metricSum
	for _, q := range b.Queries {
		if err := ctx.Err(); err != nil {
			return Metrics{}, err
		}
		qv := embed(q.Query)
		scores := make([]float32, len(docs))
		for i, d := range docs {
			scores[i] = dot(qv, d)
		}
		rel := map[int]bool{}
		for _, id := range q.Relevant {
			rel[index[id]] = true
		}
		s.add(topK(scores, 10), rel)
	}
	return s.result(), nil
}
