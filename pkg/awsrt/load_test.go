package awsrt

import (
	"context"
	"encoding/json"
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
	"github.com/toolrag/mcp-gateway/pkg/dynamo"
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

// TestLoadAfterInitWait: when the first load outlasts InitWait, NewGateway
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
	h := Dispatch(g, LambdaOptions{})

	r := invoke(t, h, event(t, "http-api-health.json", request{}))
	if r.status != http.StatusServiceUnavailable || !strings.Contains(r.body, `"loading"`) || r.header("Retry-After") == "" {
		t.Fatalf("GET /health while loading: %d %q %v", r.status, r.body, r.headers)
	}
	r = invoke(t, h, event(t, "http-api-find-tools.json", request{auth: "wrong", body: `{"query":"x"}`, path: "/tool-rag/retrieve"}))
	if r.status != http.StatusUnauthorized {
		t.Fatalf("bad key while loading: %d %q, want 401", r.status, r.body)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
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
	h := Dispatch(g, LambdaOptions{})

	// Scans (registry, catalog) fail; key lookups do not.
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
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
// runs out fails NewGateway (Lambda then retries the init), as without
// InitWait.
func TestLoadFailureWithinInitWait(t *testing.T) {
	e := newTestEnv(t)
	_, client := failingScans(t, false)
	cfg := e.config(t)
	cfg.DynamoDB, cfg.InitWait = client, time.Minute
	g, err := NewGateway(context.Background(), cfg)
	if err == nil {
		g.Close()
		t.Fatal("NewGateway succeeded although the registry cannot be read")
	}
	if !strings.Contains(err.Error(), "registry") {
		t.Fatalf("error %q does not say what could not be read", err)
	}
}
