package indexer_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

var benchWords = strings.Fields(`get list create update delete search find send read write file folder issue
	branch commit event meeting calendar email message channel user team invoice payment refund customer
	order product ticket report chart document page note task project build deployment container image
	the a with for from into by of on all new existing current recent status details content summary`)

// synthCatalog returns n generated tools (deterministic).
func synthCatalog(n int) *memCatalog {
	rng := rand.New(rand.NewPCG(3, 4))
	c := &memCatalog{}
	for s := range max(1, n/20) {
		c.servers = append(c.servers, catalog.Server{ID: fmt.Sprintf("srv%04d", s), Description: "Generated service " + fmt.Sprint(s)})
	}
	for i := range n {
		var desc []string
		for range 10 + rng.IntN(15) {
			desc = append(desc, benchWords[rng.IntN(len(benchWords))])
		}
		schema, _ := json.Marshal(map[string]any{"properties": map[string]any{
			"id":    map[string]any{"type": "string", "description": "Id of the " + benchWords[rng.IntN(len(benchWords))]},
			"limit": map[string]any{"type": "integer", "description": "Maximum number of results"},
		}})
		t := catalog.Tool{Server: c.servers[i%len(c.servers)].ID, Name: fmt.Sprintf("%s_%s_%d", benchWords[rng.IntN(20)], benchWords[20+rng.IntN(30)], i),
			Description: strings.Join(desc, " "), InputSchema: schema}
		catalog.Finalize(&t)
		c.tools = append(c.tools, t)
	}
	return c
}

// BenchmarkBuild10k measures a full build of 10,000 tools with the builtin
// embedder, and an incremental build where 1% of the tools changed.
func BenchmarkBuild10k(b *testing.B) {
	c := synthCatalog(10000)
	b.Run("full", func(b *testing.B) {
		x, _ := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin()})
		for b.Loop() {
			if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("incremental-1pct", func(b *testing.B) {
		x, _ := indexer.New(indexer.Config{Catalog: c, Embedder: embed.NewBuiltin()})
		if _, err := x.Build(context.Background(), indexer.ModeFull); err != nil {
			b.Fatal(err)
		}
		for i := 0; b.Loop(); i++ {
			for j := 0; j < 100; j++ {
				c.tools[j].Description = fmt.Sprintf("changed %d %d", i, j)
				catalog.Finalize(&c.tools[j])
			}
			res, err := x.Build(context.Background(), indexer.ModeIncremental)
			if err != nil || res.Embedded != 100 {
				b.Fatalf("%+v %v", res, err)
			}
		}
	})
}
