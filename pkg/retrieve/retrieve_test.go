package retrieve_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// memCatalog is a fixed catalog (ToolLister and indexer.Catalog).
type memCatalog struct {
	tools   []catalog.Tool
	servers []catalog.Server
}

func (c *memCatalog) ListTools(context.Context) ([]catalog.Tool, error)     { return c.tools, nil }
func (c *memCatalog) ListServers(context.Context) ([]catalog.Server, error) { return c.servers, nil }

type sanityQuery struct {
	ID       string   `json:"id"`
	Query    string   `json:"query"`
	Relevant []string `json:"relevant"`
}

// loadSynthetic reads testdata/synthetic (hand-written, see its README).
func loadSynthetic(t testing.TB) (*memCatalog, []sanityQuery) {
	t.Helper()
	dir := filepath.Join("testdata", "synthetic")
	c := &memCatalog{}
	srv := map[string]catalog.Server{}
	readLines(t, filepath.Join(dir, "tools.jsonl"), func(b []byte) {
		var l struct {
			Server, Name, Description string
			InputSchema               json.RawMessage `json:"input_schema"`
			ServerTitle               string          `json:"server_title"`
			ServerDescription         string          `json:"server_description"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			t.Fatal(err)
		}
		tool := catalog.Tool{Server: l.Server, Name: l.Name, Description: l.Description, InputSchema: l.InputSchema}
		catalog.Finalize(&tool)
		c.tools = append(c.tools, tool)
		srv[l.Server] = catalog.Server{ID: l.Server, Title: l.ServerTitle, Description: l.ServerDescription, Status: catalog.StatusActive}
	})
	for _, s := range srv {
		c.servers = append(c.servers, s)
	}
	sort.Slice(c.servers, func(i, j int) bool { return c.servers[i].ID < c.servers[j].ID })
	sort.Slice(c.tools, func(i, j int) bool { return c.tools[i].ID < c.tools[j].ID })
	var qs []sanityQuery
	readLines(t, filepath.Join(dir, "queries.jsonl"), func(b []byte) {
		var q sanityQuery
		if err := json.Unmarshal(b, &q); err != nil {
			t.Fatal(err)
		}
		qs = append(qs, q)
	})
	return c, qs
}

func readLines(t testing.TB, path string, fn func([]byte)) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			fn(sc.Bytes())
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// buildIndex builds the vector index of c with the builtin embedder. The
// vectors stay float32 (indexer.Config.Flat): these tests compare exact
// scores, also across indexes of different catalogs, whose 8-bit ranges
// (the default) would differ by a step.
func buildIndex(t testing.TB, c indexer.Catalog, emb embed.Embedder) *indexer.Indexer {
	t.Helper()
	ix, err := indexer.New(indexer.Config{Catalog: c, Embedder: emb, Flat: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ix.Build(context.Background(), indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	return ix
}

func newRetriever(t testing.TB, cfg retrieve.Config) *retrieve.Retriever {
	t.Helper()
	r, err := retrieve.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return r
}

// keywordScan ranks tools with a retriever that has no vector index: the
// keyword fallback.
func keywordScan(t testing.TB, tools []catalog.Tool, servers []catalog.Server, req retrieve.Request) retrieve.Response {
	t.Helper()
	resp, err := newRetriever(t, retrieve.Config{Tools: &memCatalog{tools: tools, servers: servers}}).Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func ids(resp retrieve.Response) []string {
	out := make([]string, len(resp.Results))
	for i, r := range resp.Results {
		out[i] = r.Tool.ID
	}
	return out
}

// TestSanity is the retrieval regression gate: on the hand-written catalog,
// every single-tool query must rank its tool first in each configuration,
// and with decomposition every multi-step query must find all its tools in
// the top 5.
func TestSanity(t *testing.T) {
	c, queries := loadSynthetic(t)
	emb := embed.NewBuiltin()
	ix := buildIndex(t, c, emb)
	configs := []struct {
		name string
		cfg  retrieve.Config
	}{
		{"hybrid", retrieve.Config{Tools: c, Index: ix, Embedder: emb}},
		{"hybrid-flat", retrieve.Config{Tools: c, Index: ix, Embedder: emb, Experimental: retrieve.Experimental{ServerWeight: -1}}},
		{"hybrid+decompose", retrieve.Config{Tools: c, Index: ix, Embedder: emb, Experimental: retrieve.Experimental{Decompose: true}}},
		{"keyword-only", retrieve.Config{Tools: c}},
		{"keyword-only-flat", retrieve.Config{Tools: c, Experimental: retrieve.Experimental{ServerWeight: -1}}},
	}
	for _, tc := range configs {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetriever(t, tc.cfg)
			for _, q := range queries {
				resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: q.Query, TopK: 5, Policy: policy.Unrestricted()})
				if err != nil {
					t.Fatalf("%s: %v", q.ID, err)
				}
				got := ids(resp)
				if len(q.Relevant) == 1 {
					if len(got) == 0 || got[0] != q.Relevant[0] {
						t.Errorf("%s %q: top is %v, want %s first", q.ID, q.Query, got, q.Relevant[0])
					}
					continue
				}
				if !tc.cfg.Decompose {
					continue
				}
				for _, want := range q.Relevant {
					if !slices.Contains(got, want) {
						t.Errorf("%s %q: top 5 %v lacks %s", q.ID, q.Query, got, want)
					}
				}
			}
		})
	}
}

func restrictedPolicy() policy.Policy {
	return policy.For(policy.Key{ID: "k", Servers: map[string]policy.Rule{
		"email":   {ToolPrefixes: []string{"send", "search"}},
		"weather": {},
	}})
}

// TestPolicyScoping checks that a tool the key cannot see never appears and
// does not change the scores of the tools it can see: the results equal
// those over a catalog that holds only the visible tools.
func TestPolicyScoping(t *testing.T) {
	full, _ := loadSynthetic(t)
	pol := restrictedPolicy()
	visible := &memCatalog{servers: full.servers}
	for _, tool := range full.tools {
		if pol.AllowsTool(tool.Server, tool.Name) {
			visible.tools = append(visible.tools, tool)
		}
	}
	if len(visible.tools) != 7 {
		t.Fatalf("the policy should leave 7 tools visible, got %d", len(visible.tools))
	}
	emb := embed.NewBuiltin()
	for _, server := range []float64{-1, 0} {
		rFull := newRetriever(t, retrieve.Config{Tools: full, Index: buildIndex(t, full, emb), Embedder: emb, Experimental: retrieve.Experimental{ServerWeight: server, Decompose: true}})
		rVis := newRetriever(t, retrieve.Config{Tools: visible, Index: buildIndex(t, visible, emb), Embedder: emb, Experimental: retrieve.Experimental{ServerWeight: server, Decompose: true}})
		for _, q := range []string{
			"delete the email from my boss",       // the best match (email__delete_email) is hidden
			"reply to the message from Ana",       // hidden too
			"send the weekly weather forecast",    // visible
			"read my latest email and then reply", // decomposed
		} {
			req := retrieve.Request{Query: q, TopK: 10, Policy: pol}
			a, err := rFull.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			req.Policy = policy.Unrestricted()
			b, err := rVis.Retrieve(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			for _, res := range a.Results {
				if !pol.AllowsTool(res.Tool.Server, res.Tool.Name) {
					t.Errorf("%q: hidden tool %s was returned", q, res.Tool.ID)
				}
			}
			if !sameRanking(a, b) {
				t.Errorf("server=%v %q: hidden tools changed the ranking:\n  with hidden: %v\n  without:     %v", server, q, scored(a), scored(b))
			}
		}
	}
}

// sameRanking reports whether two responses rank the same tools in the same
// order with the same scores up to float rounding: the SIMD dot-product
// kernel sums a row differently depending on its position in the index, so
// the same cosine can differ in the last bits between two indexes.
func sameRanking(a, b retrieve.Response) bool {
	if len(a.Results) != len(b.Results) {
		return false
	}
	for i := range a.Results {
		if a.Results[i].Tool.ID != b.Results[i].Tool.ID || math.Abs(a.Results[i].Score-b.Results[i].Score) > 1e-5 {
			return false
		}
	}
	return true
}

func scored(resp retrieve.Response) []string {
	var out []string
	for _, r := range resp.Results {
		out = append(out, fmt.Sprintf("%s=%.6f", r.Tool.ID, r.Score))
	}
	return out
}

// TestFallback checks the keyword scan without an index, with an empty
// index and with an index built by another model.
func TestFallback(t *testing.T) {
	c, _ := loadSynthetic(t)
	emb := embed.NewBuiltin()
	other := &renamed{Embedder: emb, id: "another-model"}
	cases := []struct {
		name string
		cfg  retrieve.Config
	}{
		{"no index", retrieve.Config{Tools: c, Embedder: emb}},
		{"empty index", retrieve.Config{Tools: c, Embedder: emb, Index: indexFunc(func() (*vindex.Index, vindex.Meta, bool) {
			return vindex.New(emb.Dim()), vindex.Meta{ModelID: emb.ModelID(), Dim: emb.Dim()}, true
		})}},
		{"not built yet", retrieve.Config{Tools: c, Embedder: emb, Index: indexFunc(func() (*vindex.Index, vindex.Meta, bool) {
			return nil, vindex.Meta{}, false
		})}},
		{"other model", retrieve.Config{Tools: c, Embedder: emb, Index: buildIndex(t, c, other)}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := newRetriever(t, tc.cfg)
			resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: "send an email to Bob", TopK: 3, Policy: policy.Unrestricted()})
			if err != nil {
				t.Fatal(err)
			}
			if !resp.FallbackUsed {
				t.Error("FallbackUsed = false, want true")
			}
			if got := ids(resp); len(got) == 0 || got[0] != "email__send_email" {
				t.Errorf("top = %v, want email__send_email first", got)
			}
			if r := resp.Results[0].Reason; !strings.Contains(r, "keyword=") || !strings.Contains(r, "email") || strings.Contains(r, "semantic") {
				t.Errorf("reason %q should show the keyword signal and matched terms only", r)
			}
		})
	}
	t.Run("KeywordScan", func(t *testing.T) {
		resp := keywordScan(t, c.tools, c.servers, retrieve.Request{Query: "translate this into German", TopK: 2, Policy: restrictedPolicy()})
		if !resp.FallbackUsed {
			t.Error("FallbackUsed = false")
		}
		if len(resp.Results) != 0 {
			t.Errorf("the policy grants no translation tool, got %v", ids(resp))
		}
		resp = keywordScan(t, c.tools, c.servers, retrieve.Request{Query: "translate this into German", TopK: 2, Policy: policy.Unrestricted()})
		if got := ids(resp); len(got) == 0 || got[0] != "translation__translate_text" {
			t.Errorf("top = %v", got)
		}
	})
}

// renamed is an embedder that reports another model id.
type renamed struct {
	embed.Embedder
	id string
}

func (r *renamed) ModelID() string { return r.id }

func TestDownServerWithheld(t *testing.T) {
	c, _ := loadSynthetic(t)
	emb := embed.NewBuiltin()
	up := map[string]bool{"weather": false}
	r := newRetriever(t, retrieve.Config{Tools: c, Index: buildIndex(t, c, emb), Embedder: emb,
		ServerUp: func(s string) bool { v, ok := up[s]; return !ok || v }})
	resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: "weather forecast for Paris", TopK: 10, Policy: policy.Unrestricted()})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range resp.Results {
		if res.Tool.Server == "weather" {
			t.Errorf("tool %s of a down server was returned", res.Tool.ID)
		}
	}
	up["weather"] = true
	resp, _ = r.Retrieve(context.Background(), retrieve.Request{Query: "weather forecast for Paris", TopK: 10, Policy: policy.Unrestricted()})
	if got := ids(resp); len(got) == 0 || got[0] != "weather__get_forecast" {
		t.Errorf("after recovery top = %v, want weather__get_forecast", got)
	}
}

func TestDeterminism(t *testing.T) {
	c, queries := loadSynthetic(t)
	emb := embed.NewBuiltin()
	ix := buildIndex(t, c, emb)
	for _, decompose := range []bool{false, true} {
		cfg := retrieve.Config{Tools: c, Index: ix, Embedder: emb, Experimental: retrieve.Experimental{ServerWeight: 0.3, Decompose: decompose, PRF: true}}
		checkDeterminism(t, cfg, queries)
	}
}

func checkDeterminism(t *testing.T, cfg retrieve.Config, queries []sanityQuery) {
	r1 := newRetriever(t, cfg)
	r2 := newRetriever(t, cfg)
	for _, q := range queries {
		req := retrieve.Request{Query: q.Query, TopK: 40, Policy: policy.Unrestricted()}
		a, _ := r1.Retrieve(context.Background(), req)
		b, _ := r1.Retrieve(context.Background(), req)
		d, _ := r2.Retrieve(context.Background(), req)
		if !reflect.DeepEqual(a, b) || !reflect.DeepEqual(a, d) {
			t.Fatalf("%s: results differ between runs", q.ID)
		}
		if cfg.Decompose {
			continue // merged sub-query rankings are interleaved, not sorted by score
		}
		for i := 1; i < len(a.Results); i++ {
			p, n := a.Results[i-1], a.Results[i]
			if p.Score < n.Score || (p.Score == n.Score && p.Tool.ID > n.Tool.ID) {
				t.Errorf("%s: %s (%v) before %s (%v) breaks the order", q.ID, p.Tool.ID, p.Score, n.Tool.ID, n.Score)
			}
		}
	}
}

// TestTieBreak checks that equal scores are ordered by tool id.
func TestTieBreak(t *testing.T) {
	var tools []catalog.Tool
	for _, s := range []string{"zeta", "alpha", "mid"} {
		tool := catalog.Tool{Server: s, Name: "ping", Description: "Ping the service."}
		catalog.Finalize(&tool)
		tools = append(tools, tool)
	}
	resp := keywordScan(t, tools, nil, retrieve.Request{Query: "ping", TopK: 3, Policy: policy.Unrestricted()})
	want := []string{"alpha__ping", "mid__ping", "zeta__ping"}
	if got := ids(resp); !reflect.DeepEqual(got, want) {
		t.Errorf("order = %v, want %v", got, want)
	}
}

func TestMetadataAndPenalty(t *testing.T) {
	c, _ := loadSynthetic(t)
	r := newRetriever(t, retrieve.Config{Tools: c})
	// "email" matches read, send, delete...; asking for a read-scoped query
	// tool must put a read tool first and penalise the destructive one.
	resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: "email messages", TopK: 5, Policy: policy.Unrestricted(),
		ToolType: catalog.TypeQuery, PermissionScope: catalog.ScopeRead})
	if err != nil {
		t.Fatal(err)
	}
	if top := resp.Results[0].Tool; top.PermissionScope != catalog.ScopeRead {
		t.Errorf("top %s has scope %s, want read", top.ID, top.PermissionScope)
	}
	for _, res := range resp.Results {
		if res.Tool.PermissionScope == catalog.ScopeDestructive && !strings.Contains(res.Reason, "policy_penalty") {
			t.Errorf("%s: reason %q lacks the penalty", res.Tool.ID, res.Reason)
		}
		if res.Tool.PermissionScope == catalog.ScopeRead && !strings.Contains(res.Reason, "metadata=1.00") {
			t.Errorf("%s: reason %q lacks metadata=1.00", res.Tool.ID, res.Reason)
		}
	}
}

// fixedReranker prefers one tool and records how many documents it saw.
type fixedReranker struct {
	prefer string
	seen   int
}

func (f *fixedReranker) Rerank(_ context.Context, _ string, docs []string) ([]float64, error) {
	f.seen = len(docs)
	out := make([]float64, len(docs))
	for i, d := range docs {
		if strings.HasPrefix(d, f.prefer) {
			out[i] = 1
		}
	}
	return out, nil
}

func TestReranker(t *testing.T) {
	c, _ := loadSynthetic(t)
	// A large catalog so that the shortlist bound matters.
	big := &memCatalog{servers: c.servers, tools: slices.Clone(c.tools)}
	for i := range 80 {
		tool := catalog.Tool{Server: "filesystem", Name: fmt.Sprintf("file_tool_%02d", i), Description: "Work with a file."}
		catalog.Finalize(&tool)
		big.tools = append(big.tools, tool)
	}
	emb := embed.NewBuiltin()
	rr := &fixedReranker{prefer: "detect language"} // Document starts with the split name
	r := newRetriever(t, retrieve.Config{Tools: big, Index: buildIndex(t, big, emb), Embedder: emb, Reranker: rr})
	resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: "read a file", TopK: 5, Policy: policy.Unrestricted()})
	if err != nil {
		t.Fatal(err)
	}
	if rr.seen != retrieve.MaxRerankPool {
		t.Errorf("reranker saw %d documents, want the bounded shortlist of %d", rr.seen, retrieve.MaxRerankPool)
	}
	// detect_language is far from "read a file": it is not in the shortlist,
	// so the reranker cannot promote it; the reranked top has rerank=0
	// values and keeps the hybrid order among them.
	for _, res := range resp.Results {
		if res.Tool.ID == "translation__detect_language" {
			t.Errorf("a tool outside the shortlist was returned")
		}
		if !strings.Contains(res.Reason, "rerank=") {
			t.Errorf("%s: reason %q lacks the rerank score", res.Tool.ID, res.Reason)
		}
	}
	rr.prefer = "read file"
	resp, _ = r.Retrieve(context.Background(), retrieve.Request{Query: "show the file", TopK: 5, Policy: policy.Unrestricted()})
	if got := ids(resp); got[0] != "filesystem__read_file" {
		t.Errorf("reranker preference ignored: top = %v", got)
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	c, _ := loadSynthetic(t)
	for _, cfg := range []retrieve.Config{
		{},
		{Tools: c, Experimental: retrieve.Experimental{Fusion: "sum"}},
		{Tools: c, Experimental: retrieve.Experimental{Merge: "zip"}},
	} {
		if _, err := retrieve.New(cfg); err == nil {
			t.Errorf("New(%+v) succeeded, want an error", cfg)
		}
	}
	r := newRetriever(t, retrieve.Config{Tools: c})
	if _, err := r.Retrieve(context.Background(), retrieve.Request{Query: "  ", Policy: policy.Unrestricted()}); err == nil {
		t.Error("empty query accepted")
	}
}

func TestTool(t *testing.T) {
	c, _ := loadSynthetic(t)
	r := newRetriever(t, retrieve.Config{Tools: c})
	got, err := r.Tool(context.Background(), "maps__get_directions")
	if err != nil || got.Name != "get_directions" {
		t.Errorf("Tool = %+v, %v", got, err)
	}
	if _, err := r.Tool(context.Background(), "maps__nope"); err == nil {
		t.Error("missing tool: no error")
	}
}

// TestSyncIsIncremental checks that the keyword index follows catalog
// changes and re-tokenizes only what changed.
func TestSyncIsIncremental(t *testing.T) {
	c, _ := loadSynthetic(t)
	kw := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	if up, rm := kw.Sync(c.tools, c.servers); up != 40 || rm != 0 {
		t.Fatalf("first sync: updated %d removed %d", up, rm)
	}
	tools := slices.Clone(c.tools)
	tools[0].Description = "Something new entirely: teleport."
	catalog.Finalize(&tools[0])
	tools = tools[:len(tools)-1]
	if up, rm := kw.Sync(tools, c.servers); up != 1 || rm != 1 {
		t.Errorf("second sync: updated %d removed %d, want 1 and 1", up, rm)
	}
	if kw.Len() != 39 {
		t.Errorf("Len = %d", kw.Len())
	}
	resp := keywordScan(t, tools, c.servers, retrieve.Request{Query: "teleport", TopK: 1, Policy: policy.Unrestricted()})
	if got := ids(resp); len(got) != 1 || got[0] != tools[0].ID {
		t.Errorf("changed tool not found: %v", got)
	}
}

type brokenReranker struct{}

func (brokenReranker) Rerank(context.Context, string, []string) ([]float64, error) {
	return nil, fmt.Errorf("rerank endpoint returned 503")
}

// TestRerankerFailureDegrades: a failing reranker leaves the hybrid order.
func TestRerankerFailureDegrades(t *testing.T) {
	c, _ := loadSynthetic(t)
	emb := embed.NewBuiltin()
	ix := buildIndex(t, c, emb)
	plain := newRetriever(t, retrieve.Config{Tools: c, Index: ix, Embedder: emb})
	broken := newRetriever(t, retrieve.Config{Tools: c, Index: ix, Embedder: emb, Reranker: brokenReranker{}})
	req := retrieve.Request{Query: "send an email", TopK: 5, Policy: policy.Unrestricted()}
	a, err := plain.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	b, err := broken.Retrieve(context.Background(), req)
	if err != nil {
		t.Fatalf("a failing reranker failed the query: %v", err)
	}
	if !reflect.DeepEqual(a, b) {
		t.Errorf("results differ:\n%v\n%v", scored(a), scored(b))
	}
}

// TestSyncOnlyOnSync: after its first sync a retriever reads the catalog
// again only on Sync.
func TestSyncOnlyOnSync(t *testing.T) {
	c, _ := loadSynthetic(t)
	cat := &memCatalog{tools: slices.Clone(c.tools), servers: c.servers}
	lazy := newRetriever(t, retrieve.Config{Tools: cat})
	tool := catalog.Tool{Server: "weather", Name: "get_tide_times", Description: "Tide times for a harbour."}
	catalog.Finalize(&tool)
	cat.tools = append(cat.tools, tool)
	req := retrieve.Request{Query: "tide times", TopK: 1, Policy: policy.Unrestricted()}
	if resp, _ := lazy.Retrieve(context.Background(), req); len(resp.Results) > 0 && resp.Results[0].Tool.ID == tool.ID {
		t.Error("the new tool appeared before Sync")
	}
	if err := lazy.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	if resp, _ := lazy.Retrieve(context.Background(), req); len(resp.Results) == 0 || resp.Results[0].Tool.ID != tool.ID {
		t.Errorf("after Sync the new tool is missing: %v", ids(resp))
	}
}

// indexFunc adapts a function to retrieve.IndexSource.
type indexFunc func() (*vindex.Index, vindex.Meta, bool)

func (f indexFunc) Current() (*vindex.Index, vindex.Meta, bool) { return f() }
