package awsrt

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
)

// TestColdStartReadsCatalogDuringIndexLoad: the cold start fetches the
// catalog copy and the keyword analysis it names while the index blob
// downloads, not after it: the emulator holds the index blob's GET until
// both were requested (or 5 s passed, which fails the test), and the
// cold start still takes the catalog and every tool's analysis from them.
func TestColdStartReadsCatalogDuringIndexLoad(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	if rep := e.sync(t, ""); rep.CatalogCopyErr != "" {
		t.Fatal(rep.CatalogCopyErr)
	}
	var (
		mu             sync.Mutex
		copyGet, kwGet bool
		held           bool
		waited         time.Duration
		overlapped     bool // both were requested while the index blob was held
	)
	both := make(chan struct{})
	e.s3.OnRequest(func(r *http.Request) {
		if r.Method != http.MethodGet {
			return
		}
		key := strings.TrimPrefix(r.URL.Path, "/"+testBucket+"/")
		mu.Lock()
		switch {
		case key == "index/"+indexpub.CatalogKey:
			copyGet = true
		case strings.HasPrefix(key, "index/indexes/keywords-"):
			kwGet = true
		}
		if copyGet && kwGet {
			select {
			case <-both:
			default:
				close(both)
			}
		}
		hold := strings.HasSuffix(key, ".faiss") && !held
		held = held || hold
		mu.Unlock()
		if hold {
			t0 := time.Now()
			ok := false
			select {
			case <-both:
				ok = true
			case <-time.After(5 * time.Second):
			}
			mu.Lock()
			overlapped, waited = ok, time.Since(t0)
			mu.Unlock()
		}
	})
	g := e.gateway(t)
	e.s3.OnRequest(nil)
	mu.Lock()
	defer mu.Unlock()
	if !held {
		t.Fatal("the cold start did not read an index blob")
	}
	if !overlapped {
		t.Fatalf("the index blob was held %s and the catalog copy (read: %v) and keyword analysis (read: %v) were not both requested meanwhile", waited, copyGet, kwGet)
	}
	if g.CatalogSource() != "s3" {
		t.Fatalf("catalog read from %q, want the S3 copy", g.CatalogSource())
	}
	if n, tools := g.App.Retriever.PreparedTools(), g.Catalog.Len(); tools == 0 || n != tools {
		t.Fatalf("cold start took %d of %d tools from the published analysis; want all", n, tools)
	}
	// Once loaded, the prefetch is released: it keeps nothing.
	ctx := context.Background()
	b := s3bucket.New(e.s3.Client, testBucket)
	ptr, err := indexpub.ReadPointer(ctx, b, "index/")
	if err != nil {
		t.Fatal(err)
	}
	cp, _, _, err := indexpub.ReadCatalog(ctx, b, "index/", ptr.SHA256, "")
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if _, err := g.copies.Prefetched().Keywords(ctx, cp.KeywordsSHA256); errors.Is(err, indexpub.ErrNoPrefetch) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the prefetch was not released after the first load")
		}
	}
}
