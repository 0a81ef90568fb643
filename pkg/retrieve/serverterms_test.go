package retrieve

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// TestServerTermsMatchToolPostings: the server-term index scores servers
// exactly as the pass over the tool postings does, for every view in
// which each server is wholly visible or hidden, and declines a view that
// shows part of a server.
func TestServerTermsMatchToolPostings(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	words := []string{"issue", "page", "file", "email", "invoice", "build", "deploy", "user", "search", "create", "list"}
	var tools []catalog.Tool
	var servers []catalog.Server
	for s := range 12 {
		id := fmt.Sprintf("srv%d", s)
		servers = append(servers, catalog.Server{ID: id, Description: "Service for " + words[rng.IntN(len(words))], Status: catalog.StatusActive})
		for i := range 3 + rng.IntN(6) {
			desc := ""
			for range 4 + rng.IntN(6) {
				desc += words[rng.IntN(len(words))] + " "
			}
			tl := catalog.Tool{Server: id, Name: fmt.Sprintf("%s_%s_%d", words[rng.IntN(len(words))], words[rng.IntN(len(words))], i), Description: desc}
			catalog.Finalize(&tl)
			tools = append(tools, tl)
		}
	}
	ix := NewKeywordIndex(FieldWeights{})
	ix.Sync(tools, servers)
	var cache serverTermsCache
	queries := [][]string{Terms("search issues and create a page"), Terms("email the invoice email"), Terms("deploy"), Terms("nothing matches xyzzy")}
	check := func(name string, allow func(catalog.Tool) bool, wantFast bool) {
		t.Helper()
		ix.mu.RLock()
		defer ix.mu.RUnlock()
		for _, q := range queries {
			snap := ix.view(allow)
			fast, ok := cache.get(ix).scoreServers(snap, q)
			if ok != wantFast {
				t.Fatalf("%s: fast path used %v, want %v", name, ok, wantFast)
			}
			if !ok {
				continue
			}
			slow := ix.view(allow).scoreServers(q)
			if len(fast) != len(snap.srvNames) {
				t.Fatalf("%s %v: %d scores for %d visible servers", name, q, len(fast), len(snap.srvNames))
			}
			scored := 0
			for k, srv := range snap.srvNames {
				if fast[k] != slow[srv] {
					t.Errorf("%s %v: %s scored %v, want %v", name, q, srv, fast[k], slow[srv])
				}
				if fast[k] > 0 {
					scored++
				}
			}
			if scored != len(slow) {
				t.Errorf("%s %v: %d servers scored, want %d", name, q, scored, len(slow))
			}
		}
	}
	check("everything visible", nil, true)
	check("whole servers", func(tl catalog.Tool) bool { return tl.Server != "srv3" && tl.Server != "srv7" }, true)
	check("part of a server", func(tl catalog.Tool) bool { return tl.Server != "srv3" && tl.ID != tools[0].ID }, false)
	// A sync that changes the catalog rebuilds the index.
	before := cache.get(ix)
	ix.Sync(tools[1:], servers)
	if cache.get(ix) == before {
		t.Fatal("the server-term index was not rebuilt after the catalog changed")
	}
	check("after a sync", nil, true)
}
