package retrieve_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

var (
	benchVerbs = strings.Fields(`get list create update delete search find send read write move copy rename
		upload download sync fetch check validate convert translate schedule cancel book start stop run
		merge close open approve export import archive restore share publish`)
	benchNouns = strings.Fields(`file folder issue pull_request branch commit event meeting calendar email
		message thread channel user team invoice payment refund customer subscription order product
		ticket report chart document page note task project repo build deployment container image
		volume secret key certificate domain record forecast alert location route place address
		contact lead deal campaign song playlist video photo album stock quote price transaction`)
	benchWords = strings.Fields(`the a with for from into by of on all new existing current recent given
		specified selected optional detailed full remote local public private shared daily weekly
		status details metadata content summary history list results items entries values data`)
)

// synthCatalog returns n tools over n/20 servers with generated names,
// descriptions and schemas (deterministic).
func synthCatalog(n int) *memCatalog {
	rng := rand.New(rand.NewPCG(1, 2))
	c := &memCatalog{}
	nServers := max(1, n/20)
	for s := range nServers {
		noun := benchNouns[s%len(benchNouns)]
		c.servers = append(c.servers, catalog.Server{ID: fmt.Sprintf("srv%04d", s),
			Description: fmt.Sprintf("Service %d for %s and %s management.", s, noun, benchNouns[rng.IntN(len(benchNouns))]), Status: catalog.StatusActive})
	}
	pick := func(xs []string) string { return xs[rng.IntN(len(xs))] }
	for i := range n {
		srv := c.servers[i%nServers].ID
		verb, noun := pick(benchVerbs), pick(benchNouns)
		var desc []string
		desc = append(desc, strings.ToUpper(verb[:1])+verb[1:], "the", strings.ReplaceAll(noun, "_", " "))
		for range 8 + rng.IntN(12) {
			if rng.IntN(3) == 0 {
				desc = append(desc, pick(benchNouns))
			} else {
				desc = append(desc, pick(benchWords))
			}
		}
		schema, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
			noun + "_id": map[string]any{"type": "string", "description": "Id of the " + noun},
			"limit":      map[string]any{"type": "integer", "description": "Maximum number of results"},
		}})
		t := catalog.Tool{Server: srv, Name: fmt.Sprintf("%s_%s_%d", verb, noun, i), Description: strings.Join(desc, " ") + ".", InputSchema: schema}
		catalog.Finalize(&t)
		c.tools = append(c.tools, t)
	}
	return c
}

var benchQueries = []string{
	"create a new invoice for the customer",
	"list recent pull requests in the repo",
	"send a message to the team channel and then schedule a meeting",
	"download the weekly stock price report",
	"find the route to the nearest place",
	"delete the old container image",
}

func benchmarkRetrieve(b *testing.B, n int, dense bool, cfg retrieve.Config) {
	c := synthCatalog(n)
	emb := embed.NewBuiltin()
	cfg.Tools = c
	if dense {
		cfg.Index = buildIndex(b, c, emb)
		cfg.Embedder = emb
	}
	r := newRetriever(b, cfg)
	req := retrieve.Request{TopK: 10, Policy: policy.Unrestricted()}
	b.ReportAllocs()
	cpu0 := testenv.ProcessCPU()
	count := 0
	var lat []time.Duration
	for i := 0; b.Loop(); i++ {
		req.Query = benchQueries[i%len(benchQueries)]
		start := time.Now()
		if _, err := r.Retrieve(context.Background(), req); err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(start))
		count++
	}
	// CPU time per query (user+system, all threads incl. GC): unlike
	// ns/op it does not grow when other processes compete for the cores.
	b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(count), "cpu-ns/op")
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
	b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ns")
}

// BenchmarkRetrieve10k measures query latency over 10,000 tools with the
// builtin embedder (hybrid: dense + BM25F), with the optional features, and
// for the keyword fallback alone.
func BenchmarkRetrieve10k(b *testing.B) {
	b.Run("hybrid", func(b *testing.B) { benchmarkRetrieve(b, 10000, true, retrieve.Config{}) })
	b.Run("hybrid+decompose", func(b *testing.B) {
		benchmarkRetrieve(b, 10000, true, retrieve.Config{Experimental: retrieve.Experimental{Decompose: true}})
	})
	b.Run("hybrid-flat", func(b *testing.B) {
		benchmarkRetrieve(b, 10000, true, retrieve.Config{Experimental: retrieve.Experimental{ServerWeight: -1}})
	})
	b.Run("keyword-fallback", func(b *testing.B) { benchmarkRetrieve(b, 10000, false, retrieve.Config{}) })
}

// BenchmarkKeywordSync10k measures re-syncing the keyword index after one
// tool of 10,000 changed.
func BenchmarkKeywordSync10k(b *testing.B) {
	c := synthCatalog(10000)
	kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	kw.Sync(c.tools, c.servers)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.tools[0].Description = fmt.Sprintf("changed %d", i)
		catalog.Finalize(&c.tools[0])
		if up, _ := kw.Sync(c.tools, c.servers); up != 1 {
			b.Fatalf("updated %d", up)
		}
	}
}

// BenchmarkKeywordColdSync10k builds the keyword index of 10k tools from
// scratch, as a cold start does.
// It reports the heap the index keeps (retained-MB).
func BenchmarkKeywordColdSync10k(b *testing.B) {
	c := synthCatalog(10000)
	var retained float64
	for b.Loop() {
		b.StopTimer()
		before := liveHeap()
		b.StartTimer()
		kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
		if up, _ := kw.Sync(c.tools, c.servers); up != len(c.tools) {
			b.Fatalf("indexed %d of %d tools", up, len(c.tools))
		}
		b.StopTimer()
		retained = float64(liveHeap()-before) / (1 << 20)
		runtime.KeepAlive(kw)
		b.StartTimer()
	}
	b.ReportMetric(retained, "retained-MB")
}

// liveHeap returns the bytes of live heap objects after a collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}

// agentQueries are five capability queries of one task, as an agent sends
// them in one find_tools call.
var agentQueries = []string{
	"create a new invoice for the customer",
	"send a message to the team channel",
	"schedule a meeting",
	"download the weekly stock price report",
	"write a file",
}

// BenchmarkFindTools5Queries10k measures a grouped request of five
// capability queries (find_tools with queries, top 5 each) over 10,000
// tools with the default hybrid, and the same five queries asked one
// Retrieve at a time.
//
// "grouped" uses the index as deployments build it (8-bit codes, the
// indexer's default); "grouped-f32" the float32 index (indexer.Config.Flat)
// that the other benchmarks of this package use.
func BenchmarkFindTools5Queries10k(b *testing.B) {
	c := synthCatalog(10000)
	emb := embed.NewBuiltin()
	ix8, err := indexer.New(indexer.Config{Catalog: c, Embedder: emb})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := ix8.Build(context.Background(), indexer.ModeFull); err != nil {
		b.Fatal(err)
	}
	r := newRetriever(b, retrieve.Config{Tools: c, Index: ix8, Embedder: emb})
	r32 := newRetriever(b, retrieve.Config{Tools: c, Index: buildIndex(b, c, emb), Embedder: emb})
	req := retrieve.Request{TopK: 5, Policy: policy.Unrestricted()}
	ctx := context.Background()
	run := func(b *testing.B, one func() error) {
		b.ReportAllocs()
		cpu0 := testenv.ProcessCPU()
		var lat []time.Duration
		for b.Loop() {
			start := time.Now()
			if err := one(); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(start))
		}
		b.ReportMetric(float64(testenv.ProcessCPU()-cpu0)/float64(len(lat)), "cpu-ns/op")
		slices.Sort(lat)
		b.ReportMetric(float64(lat[len(lat)/2]), "p50-ns")
		b.ReportMetric(float64(lat[min(len(lat)-1, len(lat)*99/100)]), "p99-ns")
	}
	b.Run("grouped", func(b *testing.B) {
		run(b, func() error {
			_, err := retrieve.RetrieveGroups(ctx, r, req, agentQueries)
			return err
		})
	})
	b.Run("grouped-f32", func(b *testing.B) {
		run(b, func() error {
			_, err := retrieve.RetrieveGroups(ctx, r32, req, agentQueries)
			return err
		})
	})
	b.Run("one-by-one", func(b *testing.B) {
		run(b, func() error {
			for _, q := range agentQueries {
				one := req
				one.Query = q
				if _, err := r.Retrieve(ctx, one); err != nil {
					return err
				}
			}
			return nil
		})
	})
}
