package eval

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// Dense measures dense-only retrieval of m on the dataset in dir: every
// tool is embedded as its gateway document (indexer.Document), every query
// ranks all tools by cosine (the top 10 are scored). It is for measuring
// a model outside the gateway's pipeline (Run measures that); nothing here
// feeds back into training.
func Dense(ctx context.Context, m *model2vec.Model, dir string) (rank.Metrics, error) {
	ds, err := LoadDataset(dir)
	if err != nil {
		return rank.Metrics{}, err
	}
	servers := make(map[string]catalog.Server, len(ds.Servers))
	for _, s := range ds.Servers {
		servers[s.ID] = s
	}
	docs := make([][]float32, len(ds.Tools))
	for i, t := range ds.Tools {
		docs[i] = m.Embed(indexer.Document(t, servers[t.Server]))
	}
	var sum rank.Sum[string]
	order := make([]int, len(docs))
	scores := make([]float32, len(docs))
	for _, q := range ds.Queries {
		if err := ctx.Err(); err != nil {
			return rank.Metrics{}, fmt.Errorf("eval: %w", err)
		}
		qv := m.Embed(q.Query)
		for i, d := range docs {
			order[i], scores[i] = i, vindex.Dot(qv, d)
		}
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(scores[b], scores[a]) })
		ranked := make([]string, 0, 10)
		for _, i := range order[:min(10, len(order))] {
			ranked = append(ranked, ds.Tools[i].ID)
		}
		sum.Add(ranked, q.Relevant, nil)
	}
	return sum.Result(), nil
}
