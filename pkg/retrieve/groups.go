package retrieve

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// MaxQueries bounds the capability queries of one grouped request.
const MaxQueries = 8

// MaxTotalQueryChars bounds the characters of all the queries of one
// request together (find_tools' queries, POST /tool-rag/retrieve's
// "queries"), each query being bounded on its own too: the keyword scoring
// and the query embedding grow with every term.
const MaxTotalQueryChars = 4000

// QueryCost is the rate-limit tokens a request of n queries costs: one
// per query, each being a retrieval pass of its own.
func QueryCost(n int) int { return max(1, n) }

// Group is the answer to one capability query of a grouped request.
type Group struct {
	Query   string
	Results []Result
	// Hint is set when no result is better than a weak match.
	Hint string
}

// GroupResponse answers a grouped request: one Group per query, in the
// order of the queries.
type GroupResponse struct {
	Groups       []Group
	FallbackUsed bool
	Loading      bool
}

// Searcher ranks tools for one query (a *Retriever, or another
// implementation of the gateway's Retriever).
type Searcher interface {
	Retrieve(ctx context.Context, req Request) (Response, error)
}

// GroupSearcher ranks tools for several queries in one pass (*Retriever
// does; so does a wrapper around one). RetrieveGroups checks the queries
// before it calls SearchGroups.
type GroupSearcher interface {
	SearchGroups(ctx context.Context, req Request, queries []string) (GroupResponse, error)
}

// RetrieveGroups ranks tools for several capability queries at once (an
// agent asking for every capability its task needs, implied steps
// included). Each query gets up to req.TopK results; a tool already
// returned for an earlier query is left out of later groups, which are
// filled from further down their own ranking. req.Query is ignored. A
// GroupSearcher (a *Retriever) answers in one pass (one policy view, one
// scan of the vector index for all queries); any other Searcher is asked
// once per query.
func RetrieveGroups(ctx context.Context, s Searcher, req Request, queries []string) (GroupResponse, error) {
	if len(queries) == 0 {
		return GroupResponse{}, errors.New("retrieve: no queries")
	}
	if len(queries) > MaxQueries {
		return GroupResponse{}, fmt.Errorf("retrieve: %d queries; the limit is %d", len(queries), MaxQueries)
	}
	for i, q := range queries {
		if strings.TrimSpace(q) == "" {
			return GroupResponse{}, fmt.Errorf("retrieve: query %d is empty", i+1)
		}
	}
	if g, ok := s.(GroupSearcher); ok {
		return g.SearchGroups(ctx, req, queries)
	}
	topK := clampTopK(req.TopK)
	var out GroupResponse
	seen := map[string]bool{}
	for _, q := range queries {
		sub := req
		sub.Query, sub.TopK = q, min(MaxTopK, topK+len(seen))
		resp, err := s.Retrieve(ctx, sub)
		if err != nil {
			return GroupResponse{}, err
		}
		out.FallbackUsed = out.FallbackUsed || resp.FallbackUsed
		out.Loading = out.Loading || resp.Loading
		out.Groups = append(out.Groups, newGroup(q, resp.Results, topK, seen))
	}
	return out, nil
}

func clampTopK(k int) int {
	if k <= 0 {
		return DefaultTopK
	}
	return min(k, MaxTopK)
}

// newGroup keeps the first topK results not in seen and marks them seen.
func newGroup(query string, results []Result, topK int, seen map[string]bool) Group {
	g := Group{Query: query}
	for _, res := range results {
		if len(g.Results) >= topK {
			break
		}
		if seen[res.Tool.ID] {
			continue
		}
		seen[res.Tool.ID] = true
		g.Results = append(g.Results, res)
	}
	g.Hint = hintFor(query, g.Results)
	return g
}

// hintFor returns NoMatchHint(query) when no result is better than weak.
func hintFor(query string, results []Result) string {
	for _, res := range results {
		if res.Match != MatchWeak && res.Match != "" {
			return ""
		}
	}
	return NoMatchHint(query)
}

// SearchGroups implements GroupSearcher: the queries of RetrieveGroups
// ranked in one pass.
func (r *Retriever) SearchGroups(ctx context.Context, req Request, queries []string) (GroupResponse, error) {
	if err := r.ensureSynced(ctx); err != nil {
		return GroupResponse{}, err
	}
	topK := clampTopK(req.TopK)
	for i, q := range queries {
		if len(q) > maxQueryBytes {
			queries[i] = q[:maxQueryBytes]
		}
	}
	return r.search(ctx, req, queries, topK)
}

// search ranks queries (each already cut to maxQueryBytes) in one pass and
// keeps up to topK results a query, each tool only in the first group that
// has it; the first results of a group carry their related tools.
func (r *Retriever) search(ctx context.Context, req Request, queries []string, topK int) (GroupResponse, error) {
	ctx, span, clk := startRetrieve(ctx, len(queries), topK)
	r.kw.mu.RLock()
	defer r.kw.mu.RUnlock()
	clk.mark(stageCandidates, 0)
	snap := r.visible(req)
	clk.visibleTools(snap)
	dense := r.denseIndex()
	out := GroupResponse{FallbackUsed: dense == nil}
	lists, err := r.rankAll(ctx, clk, snap, dense, queries, req, min(MaxTopK, topK*len(queries)))
	if err != nil {
		endRetrieve(span, clk, nil, dense != nil, err)
		return GroupResponse{}, err
	}
	defer func() {
		var first []Result
		if len(out.Groups) > 0 {
			first = out.Groups[0].Results
		}
		endRetrieve(span, clk, first, dense != nil, nil)
	}()
	seen := map[string]bool{}
	withRelated := max(2, MaxRelatedResults/len(queries))
	for i, q := range queries {
		g := Group{Query: q}
		for _, c := range lists[i] {
			if len(g.Results) >= topK {
				break
			}
			if seen[c.d.tool.ID] {
				continue
			}
			seen[c.d.tool.ID] = true
			g.Results = append(g.Results, r.result(snap, c, len(g.Results) < withRelated))
		}
		g.Hint = hintFor(q, g.Results)
		out.Groups = append(out.Groups, g)
	}
	return out, nil
}

// visible is the policy view of the keyword index for req. Must be called
// with r.kw.mu read-locked.
func (r *Retriever) visible(req Request) *visibleCorpus {
	return r.kw.view(func(t catalog.Tool) bool {
		if !req.Policy.AllowsTool(t.Server, t.Name) {
			return false
		}
		return r.cfg.ServerUp == nil || r.cfg.ServerUp(t.Server)
	})
}

// rankAll ranks each query (with its decomposition when Experimental.Decompose
// is on, merged to at least want results), embedding and scanning the
// vector index for all of them in one pass.
func (r *Retriever) rankAll(ctx context.Context, clk *stageClock, snap *visibleCorpus, dense *denseState, queries []string, req Request, want int) ([][]*candidate, error) {
	var flat []string
	spans := make([][2]int, len(queries))
	for i, q := range queries {
		start := len(flat)
		if !r.cfg.KeepToolRequest {
			q = stripToolRequest(q)
		}
		flat = append(flat, q)
		if r.cfg.Decompose {
			if parts := Decompose(q); len(parts) > 1 {
				flat = append(flat, parts...)
			}
		}
		spans[i] = [2]int{start, len(flat)}
	}
	if r.cfg.ServerWeight > 0 {
		snap.servers()
	}
	// The keyword phase of every (sub-)query runs while the vector index
	// is scanned, then each query is ranked; the goroutines share only
	// read-only state (the server statistics are computed first).
	workers := runtime.GOMAXPROCS(0)
	kps := make([]*keywordPhase, len(flat))
	var pre []*denseQuery
	var denseErr error
	if workers <= 1 {
		clk.mark(stageDense, 0)
		pre, denseErr = r.denseQueries(ctx, dense, snap, flat)
		clk.mark(stageDense, 1)
		clk.mark(stageKeyword, 0)
		for j := range flat {
			kps[j] = r.keywordPhase(snap, flat[j])
		}
		clk.mark(stageKeyword, 1)
	} else {
		var wg sync.WaitGroup
		wg.Go(func() {
			clk.mark(stageDense, 0)
			pre, denseErr = r.denseQueries(ctx, dense, snap, flat)
			clk.mark(stageDense, 1)
		})
		clk.mark(stageKeyword, 0)
		parallel(workers, len(flat), func(j int) { kps[j] = r.keywordPhase(snap, flat[j]) })
		clk.mark(stageKeyword, 1)
		wg.Wait()
	}
	if denseErr != nil {
		return nil, denseErr
	}
	ranked := make([][]*candidate, len(flat))
	errs := make([]error, len(flat))
	clk.mark(stageFusion, 0)
	parallel(workers, len(flat), func(j int) {
		ranked[j], errs[j] = r.rank(ctx, snap, dense, pre[j], kps[j], flat[j], req, want)
	})
	clk.mark(stageFusion, 1)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := make([][]*candidate, len(queries))
	for i, sp := range spans {
		lists := ranked[sp[0]:sp[1]]
		out[i] = lists[0]
		if len(lists) > 1 {
			out[i] = r.merge(lists, want)
		}
	}
	return out, nil
}

// parallel calls fn(0..n-1) on up to workers goroutines (on the caller's
// goroutine when workers ≤ 1).
func parallel(workers, n int, fn func(i int)) {
	if workers <= 1 || n <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n {
					return
				}
				fn(i)
			}
		})
	}
	wg.Wait()
}
