package train

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/indexer"
	"github.com/toolrag/mcp-gateway/pkg/model2vec"
)

func TestTmpCoverage(t *testing.T) {
	if os.Getenv("TMPA") == "" {
		t.Skip()
	}
	base, _ := readBaseTokenizer(t.Context(), "")
	bt, _ := model2vec.ParseTokenizer(base)
	m, err := model2vec.LoadDir("/tmp/m1")
	if err != nil {
		t.Fatal(err)
	}
	pt := m.Tokenizer()
	for _, name := range []string{"livemcpbench", "stabletoolbench"} {
		b, _ := LoadBench(filepath.Join("/work/shared/bench", name))
		var texts []string
		for _, q := range b.Queries {
			texts = append(texts, q.Query)
		}
		nq := len(texts)
		for _, tl := range b.Tools {
			texts = append(texts, indexer.Document(tl, b.Servers[tl.Server]))
		}
		for part, ts := range map[string][]string{"queries": texts[:nq], "docs": texts[nq:]} {
			var total, missing, ptoks int
			miss := map[string]int{}
			for _, s := range ts {
				for _, id := range bt.Encode(s) {
					total++
					tok := bt.Token(id)
					if _, ok := pt.ID(tok); !ok {
						missing++
						miss[tok]++
					}
				}
				ptoks += len(pt.Encode(s))
			}
			t.Logf("%s %s: %d BERT tokens, %d (%.1f%%) not in pruned vocab; pruned tokenization %d tokens; distinct missing %d", name, part, total, missing, 100*float64(missing)/float64(total), ptoks, len(miss))
		}
	}
}
