package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
)

// gate is a reverse proxy to an emulator that can hold requests (until
// open is closed) or answer the ones a failure matches with its error.
type gate struct {
	*httptest.Server
	open chan struct{}
	fail atomic.Pointer[failure]
}

// failure is an error answer for the requests match picks.
type failure struct {
	match       func(*http.Request) bool
	status      int
	contentType string
	body        string
}

// scanFailure is what DynamoDB answers for a missing table (not retried
// by the SDK), for every Scan: the registry and the catalog cannot be
// read, key lookups still work.
var scanFailure = &failure{
	match:       func(r *http.Request) bool { return strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Scan") },
	status:      http.StatusBadRequest,
	contentType: "application/x-amz-json-1.0",
	body:        `{"__type":"com.amazonaws.dynamodb.v20120810#ResourceNotFoundException","message":"Requested resource not found (injected)"}`,
}

func newGate(t testing.TB, target string, closed bool) *gate {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	g := &gate{open: make(chan struct{})}
	if !closed {
		close(g.open)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	g.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-g.open:
		case <-r.Context().Done():
			return
		}
		if f := g.fail.Load(); f != nil && (f.match == nil || f.match(r)) {
			w.Header().Set("Content-Type", f.contentType)
			w.WriteHeader(f.status)
			_, _ = w.Write([]byte(f.body))
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(g.Close)
	return g
}

// watch shows each request that pick selects, with its body, to seen on
// its way through the gate.
func (g *gate) watch(pick func(*http.Request) bool, seen func(r *http.Request, body []byte)) {
	g.fail.Store(&failure{match: func(r *http.Request) bool {
		if pick(r) {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			seen(r, body)
		}
		return false
	}})
}

// watchScans returns a DynamoDB client whose Scan requests are shown to
// seen (the JSON body) on their way to the emulator.
func watchScans(t testing.TB, seen func(body []byte)) *dynamodb.Client {
	t.Helper()
	g := newGate(t, testenv.DynamoDB(t), false)
	g.watch(func(r *http.Request) bool { return strings.HasSuffix(r.Header.Get("X-Amz-Target"), ".Scan") },
		func(_ *http.Request, body []byte) { seen(body) })
	client, err := dynamo.NewClient(context.Background(), g.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// failingScans returns a gate in front of DynamoDB that fails every Scan,
// and a client that goes through it.
func failingScans(t testing.TB, closed bool) (*gate, *dynamodb.Client) {
	t.Helper()
	g := newGate(t, testenv.DynamoDB(t), closed)
	g.fail.Store(scanFailure)
	client, err := dynamo.NewClient(context.Background(), g.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	return g, client
}

// TestLoadAfterInitWait: when the first load outlasts InitWait, NewGatewayFunction
// returns anyway; GET /health says "loading", callers are still
// authenticated, authenticated requests wait for the load and then get
// the real answer, and one whose deadline comes first gets 503 with
// Retry-After before that deadline.
func TestLoadAfterInitWait(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")

	s3gate := newGate(t, e.s3.URL, true)
	g := e.gateway(t, func(c *Config) { c.S3, c.S3Endpoint, c.InitWait = nil, s3gate.URL, time.Millisecond })
	select {
	case <-g.Loaded():
		t.Fatal("loaded although S3 holds every request")
	default:
	}
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})

	r := invoke(t, h, event(t, "http-api-health.json", request{}))
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, `"loading"`) || r.header("Retry-After") == "" {
		t.Fatalf("GET /health while loading: %d %q %v", r.status, r.body, r.headers)
	}
	r = invoke(t, h, event(t, "http-api-find-tools.json", request{auth: "wrong", body: `{"query":"x"}`, path: "/tool-rag/retrieve"}))
	if r.status != http.StatusUnauthorized {
		t.Fatalf("bad key while loading: %d %q, want 401", r.status, r.body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	r = invokeCtx(t, ctx, h, event(t, "http-api-find-tools.json", request{auth: agentSecret, body: `{"query":"reverse a text"}`, path: "/tool-rag/retrieve"}))
	if ctx.Err() != nil {
		t.Fatalf("answered after the invocation's deadline: %d %q", r.status, r.body)
	}
	if r.status != http.StatusServiceUnavailable || r.header("Retry-After") == "" || !strings.Contains(r.body, "still loading") {
		t.Fatalf("request whose deadline comes first: %d %q, want 503 with Retry-After", r.status, r.body)
	}
	var msg map[string]string
	if err := json.Unmarshal([]byte(r.body), &msg); err != nil || msg["error"] == "" {
		t.Fatalf("503 body %q is not {\"error\": ...}: %v", r.body, err)
	}

	type answer struct {
		tools    []string
		fallback bool
	}
	waiting := make(chan answer, 1)
	go func() {
		tools, fallback := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
		waiting <- answer{tools, fallback}
	}()
	select {
	case a := <-waiting:
		t.Fatalf("answered before the load finished: %+v", a)
	case <-time.After(200 * time.Millisecond):
	}
	close(s3gate.open)
	a := <-waiting
	if a.fallback || len(a.tools) == 0 || a.tools[0] != "echo__reverse" {
		t.Fatalf("request that waited for the load: %v fallback=%v; want the vector index", a.tools, a.fallback)
	}
	<-g.Loaded()
	if cs := g.ColdStart(); cs.IndexBytes == 0 || cs.Total < 200*time.Millisecond {
		t.Fatalf("cold start after a background load: %+v", cs)
	}
	if r := invoke(t, h, event(t, "http-api-health.json", request{})); r.status != http.StatusOK {
		t.Fatalf("GET /health after the load: %d %q", r.status, r.body)
	}
}

// TestLoadRetriedInBackground: a first load that fails after InitWait is
// retried until it succeeds; nothing is served from a half-loaded
// gateway meanwhile.
func TestLoadRetriedInBackground(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")

	ddb, client := failingScans(t, true)
	g := e.gateway(t, func(c *Config) { c.DynamoDB, c.InitWait, c.loadRetry = client, time.Millisecond, 20*time.Millisecond })
	close(ddb.open)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})

	// Scans (registry, catalog) fail; key lookups do not.
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Second)
	defer cancel()
	r := invokeCtx(t, ctx, h, event(t, "http-api-find-tools.json", request{auth: agentSecret, body: `{"query":"reverse a text"}`, path: "/tool-rag/retrieve"}))
	if r.status != http.StatusServiceUnavailable {
		t.Fatalf("while the catalog cannot be read: %d %q, want 503", r.status, r.body)
	}
	select {
	case <-g.Loaded():
		t.Fatal("loaded while every scan fails")
	default:
	}

	ddb.fail.Store(nil)
	tools, fallback := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if fallback || len(tools) == 0 || tools[0] != "echo__reverse" {
		t.Fatalf("after DynamoDB recovered: %v fallback=%v", tools, fallback)
	}
}

// TestLoadFailureWithinInitWait: a first load that fails before InitWait
// runs out fails NewGatewayFunction (Lambda then retries the init), as without
// InitWait.
func TestLoadFailureWithinInitWait(t *testing.T) {
	e := newTestEnv(t)
	_, client := failingScans(t, false)
	cfg := e.config(t)
	cfg.DynamoDB, cfg.InitWait = client, time.Minute
	g, err := NewGatewayFunction(context.Background(), cfg)
	if err == nil {
		g.Close()
		t.Fatal("NewGatewayFunction succeeded although the registry cannot be read")
	}
	if !strings.Contains(err.Error(), "registry") {
		t.Fatalf("error %q does not say what could not be read", err)
	}
}

// TestCatalogCopyBeforePointer: every time a sync switches the index
// pointer, the catalog copy for the new index is already in S3, so a
// gateway that sees the pointer never falls back to scanning the table.
func TestCatalogCopyBeforePointer(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	var switches, mismatches atomic.Int64
	var why atomic.Pointer[string]
	s3 := newGate(t, e.s3.URL, false)
	s3.watch(func(r *http.Request) bool {
		return r.Method == http.MethodPut && strings.HasSuffix(r.URL.Path, "/index/current.json")
	}, func(r *http.Request, body []byte) {
		var ptr struct {
			SHA256 string `json:"sha256"`
		}
		_ = json.Unmarshal(body, &ptr)
		switches.Add(1)
		c, _, ok, err := indexpub.ReadCatalog(r.Context(), s3bucket.New(e.s3.Client, testBucket), "index/", ptr.SHA256, "")
		if !ok {
			mismatches.Add(1)
			msg := fmt.Sprintf("pointer to %s switched while the copy is for %q (%v)", ptr.SHA256, c.IndexSHA256, err)
			why.Store(&msg)
		}
	})
	sync := func(event string) SyncReport {
		t.Helper()
		cfg := e.config(t)
		cfg.S3, cfg.S3Endpoint = nil, s3.URL
		s, err := NewSyncer(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rep, err := s.Handle(context.Background(), json.RawMessage(event))
		if err != nil || rep.CatalogCopyErr != "" {
			t.Fatalf("sync: %v %+v", err, rep)
		}
		return rep
	}
	sync("")
	e.register(t, "echo2", startEcho(t))
	sync(`{"mode":"incremental"}`)
	sync(`{"mode":"full"}`)
	if switches.Load() != 3 || mismatches.Load() != 0 {
		msg := ""
		if p := why.Load(); p != nil {
			msg = *p
		}
		t.Fatalf("%d pointer switches, %d without their catalog copy: %s", switches.Load(), mismatches.Load(), msg)
	}
}

// TestPeriodicCatalogRefreshReadsCopy: the periodic catalog re-read of a
// warm gateway is a conditional GET of the catalog copy, not a scan of the
// tools table; a copy rewritten by a sync that published nothing new (the
// same index) is picked up.
func TestPeriodicCatalogRefreshReadsCopy(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")

	var toolScans atomic.Int64
	client := watchScans(t, func(body []byte) {
		if strings.Contains(string(body), `"`+e.tables.Tools+`"`) {
			toolScans.Add(1)
		}
	})
	g := e.gateway(t, func(c *Config) { c.DynamoDB = client })
	if g.CatalogSource() != "s3" || toolScans.Load() != 0 {
		t.Fatalf("cold start: catalog from %q with %d tools-table scans; want the copy and none", g.CatalogSource(), toolScans.Load())
	}
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	checks := g.Refreshes()
	e.clock.Advance(g.cfg.CatalogMaxAge)
	if tools, _ := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`); len(tools) == 0 {
		t.Fatal("no tools after the periodic refresh")
	}
	if g.Refreshes() == checks || toolScans.Load() != 0 || g.CatalogSource() != "s3" {
		t.Fatalf("periodic refresh: %d checks, %d tools-table scans, source %q; want a check that reads the copy only",
			g.Refreshes()-checks, toolScans.Load(), g.CatalogSource())
	}

	// A sync that marks echo's tools stale publishes the same index again,
	// with a new copy: the gateway reads the copy, not the table.
	before := g.Catalog.Len()
	e.register(t, "echo", deadURL(t))
	if rep := e.sync(t, `{"mode":"incremental"}`); len(rep.Sync.Stale) != 1 {
		t.Fatalf("sync with echo down: %+v", rep.Sync)
	}
	e.clock.Advance(g.cfg.CatalogMaxAge)
	retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	tools, _ := g.Catalog.ListTools(context.Background())
	stale := 0
	for _, tl := range tools {
		if tl.Status == catalog.StatusStale {
			stale++
		}
	}
	if len(tools) != before || stale != before || toolScans.Load() != 0 {
		t.Fatalf("after the stale sync: %d tools (%d stale), %d tools-table scans; want %d stale from the copy and no scan",
			len(tools), stale, toolScans.Load(), before)
	}

	// A sync whose index build fails publishes nothing, but it changed the
	// table (echo2's tools): the copy of the current index is written
	// again, and the periodic re-read finds echo2 there.
	e.register(t, "echo2", startEcho(t))
	cfg := e.config(t)
	cfg.Embedder = failingEmbedder{e.emb}
	if rep, err := runSync(context.Background(), cfg, "incremental"); err == nil || rep.CatalogCopyErr != "" {
		t.Fatalf("sync with a failing embedder: %v %+v; want a build error and the copy written", err, rep)
	}
	e.clock.Advance(g.cfg.CatalogMaxAge)
	retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if n := g.Catalog.Len(); n != 2*before || toolScans.Load() != 0 {
		t.Fatalf("after the failed build: %d tools, %d tools-table scans; want %d from the copy", n, toolScans.Load(), 2*before)
	}
}

// failingEmbedder embeds queries but no documents.
type failingEmbedder struct{ embed.Embedder }

func (failingEmbedder) EmbedDocuments(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("embedding service unavailable (injected)")
}

// TestSyncReadsTableOnce: after the upstreams are synced, a sync reads the
// tools table once (its tools and its servers) for the index build and the
// catalog copy together. (Before: twice, five whole-table reads in all.)
func TestSyncReadsTableOnce(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	var starts atomic.Int64
	client := watchScans(t, func(body []byte) {
		var in struct {
			TableName         string
			Segment           *int
			ExclusiveStartKey map[string]any
		}
		_ = json.Unmarshal(body, &in)
		if in.TableName == e.tables.Tools && in.ExclusiveStartKey == nil && (in.Segment == nil || *in.Segment == 0) {
			starts.Add(1) // the first page of a whole-table read
		}
	})
	cfg := e.config(t)
	cfg.DynamoDB = client
	rep, err := runSync(context.Background(), cfg, "full")
	if err != nil || rep.CatalogCopyErr != "" || rep.Index.Tools == 0 {
		t.Fatalf("sync: %v %+v", err, rep)
	}
	// The syncer lists the known servers first; then tools and servers.
	if n := starts.Load(); n != 3 {
		t.Fatalf("the sync read the whole tools table %d times, want 3 (the syncer's server list, then tools and servers once)", n)
	}
}

// TestWarmSyncerKeepsNoCatalog: a warm sync function reads the table
// afresh in every run and holds no catalog between runs.
func TestWarmSyncerKeepsNoCatalog(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	s, err := NewSyncer(context.Background(), e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	first, err := s.RunServers(context.Background(), "full", nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := s.catalog.Len(); n != 0 {
		t.Fatalf("%d tools held after the run", n)
	}
	e.register(t, "echo2", startEcho(t))
	second, err := s.RunServers(context.Background(), "incremental", nil)
	if err != nil || second.Index.Tools != 2*first.Index.Tools || second.Index.Reused != first.Index.Tools || second.CatalogCopyErr != "" {
		t.Fatalf("second run on the warm syncer: %v %+v (first %+v)", err, second.Index, first.Index)
	}
}
