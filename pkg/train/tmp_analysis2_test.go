package train

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/indexer"
	"github.com/toolrag/mcp-gateway/pkg/model2vec"
)

func TestTmpFailures(t *testing.T) {
	if os.Getenv("TMPA") == "" {
		t.Skip()
	}
	m, err := model2vec.LoadDir(os.Getenv("TMPM"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := LoadBench(filepath.Join("/work/shared/bench", os.Getenv("TMPB")))
	docs := make([][]float32, len(b.Tools))
	for i, tl := range b.Tools {
		docs[i] = m.Embed(indexer.Document(tl, b.Servers[tl.Server]))
	}
	for qi, q := range b.Queries {
		if qi%9 != 0 {
			continue
		}
		qv := m.Embed(q.Query)
		scores := make([]float32, len(docs))
		for i, d := range docs {
			scores[i] = dot(qv, d)
		}
		rank := topK(scores, len(docs))
		pos := map[int]int{}
		for r, i := range rank {
			pos[i] = r + 1
		}
		fmt.Printf("Q: %.200s\n", q.Query)
		for _, id := range q.Relevant {
			for i, tl := range b.Tools {
				if tl.ID == id {
					fmt.Printf("   rel %-60s rank %d\n", id, pos[i])
				}
			}
		}
		for r := 0; r < 5; r++ {
			fmt.Printf("   top%d %s\n", r+1, b.Tools[rank[r]].ID)
		}
	}
}
