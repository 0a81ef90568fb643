package eval

import (
	"context"
	"errors"
	"math"
	"sort"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// plainBM25 is the textbook baseline the benchmark READMEs report: each
// tool is one document (server + name + description + parameter names and
// descriptions), scored with BM25 (k1 1.2, b 0.75) over the project's
// tokenizer (retrieve.Terms). No fields, no server level, no dense part.
// It ignores the request's policy (the evaluation is unrestricted).
type plainBM25 struct {
	tools  []catalog.Tool
	tf     []map[string]int
	length []float64
	avg    float64
	df     map[string]int
}

func newPlainBM25(tools []catalog.Tool) *plainBM25 {
	p := &plainBM25{tools: tools, df: map[string]int{}}
	var total float64
	for _, t := range tools {
		text := t.Server + " " + t.Name + " " + t.Description
		for _, prm := range indexer.SchemaParams(t.InputSchema) {
			text += " " + prm.Name + " " + prm.Description
		}
		tf := map[string]int{}
		terms := retrieve.Terms(text)
		for _, w := range terms {
			if tf[w] == 0 {
				p.df[w]++
			}
			tf[w]++
		}
		p.tf = append(p.tf, tf)
		p.length = append(p.length, float64(len(terms)))
		total += float64(len(terms))
	}
	if len(tools) > 0 {
		p.avg = total / float64(len(tools))
	}
	return p
}

// Retrieve implements retrieve.Searcher.
func (p *plainBM25) Retrieve(_ context.Context, req retrieve.Request) (retrieve.Response, error) {
	if req.Query == "" {
		return retrieve.Response{}, errors.New("eval: empty query")
	}
	n := float64(len(p.tools))
	q := retrieve.Terms(req.Query)
	scores := make([]float64, len(p.tools))
	for i, tf := range p.tf {
		for _, w := range q {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			df := float64(p.df[w])
			idf := math.Log(1 + (n-df+0.5)/(df+0.5))
			scores[i] += idf * f * 2.2 / (f + 1.2*(1-0.75+0.75*p.length[i]/math.Max(p.avg, 1)))
		}
	}
	idx := make([]int, 0, len(p.tools))
	for i, s := range scores {
		if s > 0 {
			idx = append(idx, i)
		}
	}
	sort.Slice(idx, func(a, b int) bool {
		if scores[idx[a]] != scores[idx[b]] {
			return scores[idx[a]] > scores[idx[b]]
		}
		return p.tools[idx[a]].ID < p.tools[idx[b]].ID
	})
	k := req.TopK
	if k <= 0 {
		k = retrieve.DefaultTopK
	}
	var resp retrieve.Response
	for i := 0; i < len(idx) && i < k; i++ {
		resp.Results = append(resp.Results, retrieve.Result{Tool: p.tools[idx[i]], Score: scores[idx[i]]})
	}
	return resp, nil
}
