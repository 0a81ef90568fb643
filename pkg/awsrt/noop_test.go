package awsrt

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
)

// s3Log records the requests the S3 emulator serves, as "METHOD key".
type s3Log struct {
	mu   sync.Mutex
	reqs []string
}

func (l *s3Log) record(r *http.Request) {
	key := strings.TrimPrefix(r.URL.Path, "/"+testBucket+"/")
	l.mu.Lock()
	l.reqs = append(l.reqs, r.Method+" "+key)
	l.mu.Unlock()
}

// take returns the requests recorded since the last take.
func (l *s3Log) take() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.reqs
	l.reqs = nil
	return out
}

func count(reqs []string, method, keyPrefix string) int {
	n := 0
	for _, r := range reqs {
		m, key, _ := strings.Cut(r, " ")
		if m == method && strings.HasPrefix(key, keyPrefix) {
			n++
		}
	}
	return n
}

// TestNoChangeSyncsCostNothing: syncs that find the catalog unchanged (by
// fresh sync functions and by a warm one) write nothing to S3 (no index
// blob, no meta, no pointer, no catalog copy), and a warm gateway that
// checks for a new index after each of them reloads nothing (no read of
// an index blob, a meta or the catalog copy; the same index stays in
// use). A real change afterwards is written and picked up.
func TestNoChangeSyncsCostNothing(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	first := e.sync(t, "")
	if first.Index.Tools == 0 || first.CatalogCopyErr != "" {
		t.Fatalf("first sync: %+v", first)
	}
	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	ix0, meta0, _ := g.Indexer.Current()
	var log s3Log
	e.s3.OnRequest(log.record)
	defer e.s3.OnRequest(nil)

	warm, err := NewSyncer(context.Background(), e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	syncs := []struct {
		name string
		run  func() SyncReport
	}{
		{"fresh sync function, incremental", func() SyncReport { return e.sync(t, "") }},
		{"fresh sync function, again", func() SyncReport { return e.sync(t, `{"mode":"incremental"}`) }},
		{"warm sync function", func() SyncReport { rep, _ := warm.RunServers(context.Background(), "incremental", nil); return rep }},
		{"warm sync function, again", func() SyncReport { rep, _ := warm.RunServers(context.Background(), "incremental", nil); return rep }},
		{"full rebuild, same content", func() SyncReport { return e.sync(t, `{"mode":"full"}`) }},
	}
	checks := g.Refreshes()
	for _, s := range syncs {
		rep := s.run()
		if rep.IndexErr != "" || rep.CatalogCopyErr != "" || rep.Index.Tools != first.Index.Tools {
			t.Fatalf("%s: %+v", s.name, rep)
		}
		reqs := log.take()
		if n := count(reqs, http.MethodPut, ""); n != 0 {
			t.Errorf("%s: %d PUTs to S3, want none: %v", s.name, n, reqs)
		}
		e.clock.Advance(g.cfg.IndexRefresh)
		if tools, fallback := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`); len(tools) == 0 || fallback {
			t.Fatalf("%s: retrieve after the sync: %v (fallback %v)", s.name, tools, fallback)
		}
		reqs = log.take()
		if count(reqs, http.MethodGet, "index/"+indexpub.PointerKey) != 1 {
			t.Errorf("%s: the gateway did not check the pointer once: %v", s.name, reqs)
		}
		if n := count(reqs, http.MethodGet, "index/indexes/") + count(reqs, http.MethodGet, "index/"+indexpub.CatalogKey); n != 0 {
			t.Errorf("%s: the gateway reloaded (%d reads of the index, meta or catalog copy): %v", s.name, n, reqs)
		}
		if ix, meta, _ := g.Indexer.Current(); ix != ix0 || meta.IndexSHA256 != meta0.IndexSHA256 || !meta.BuiltAt.Equal(meta0.BuiltAt) {
			t.Errorf("%s: the gateway's index changed (built %s, first %s)", s.name, meta.BuiltAt, meta0.BuiltAt)
		}
	}
	if g.Refreshes()-checks != int64(len(syncs)) {
		t.Fatalf("%d refresh checks, want %d", g.Refreshes()-checks, len(syncs))
	}

	// A real change: a new server. Its index, meta, pointer and copy are
	// written, and the gateway loads them.
	e.register(t, "echo2", startEcho(t))
	rep := e.sync(t, "")
	reqs := log.take()
	for _, key := range []string{"index/indexes/", "index/" + indexpub.PointerKey, "index/" + indexpub.CatalogKey} {
		if count(reqs, http.MethodPut, key) == 0 {
			t.Errorf("a sync with a new server wrote nothing under %s: %v", key, reqs)
		}
	}
	e.clock.Advance(g.cfg.IndexRefresh)
	retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if ix, _, _ := g.Indexer.Current(); ix == ix0 || ix.Len() != rep.Index.Tools || g.Catalog.Len() != rep.Index.Tools {
		t.Fatalf("after a real change the gateway has %d indexed tools and %d in its catalog, want %d", ix.Len(), g.Catalog.Len(), rep.Index.Tools)
	}
}
