package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// initialize starts a legacy session with the sample initialize event and
// returns its id.
func initialize(t testing.TB, h func(context.Context, json.RawMessage) (any, error), sample, secret string) string {
	t.Helper()
	r := invoke(t, h, event(t, sample, request{auth: secret}))
	if r.status != http.StatusOK {
		t.Fatalf("initialize (%s): status %d %q", sample, r.status, r.body)
	}
	result(t, r, 1)
	sid := r.header("Mcp-Session-Id")
	if !session.ValidID(sid) {
		t.Fatalf("initialize (%s): session id %q", sample, sid)
	}
	return sid
}

// findTools runs find_tools over the HTTP API sample event.
func findTools(t testing.TB, h func(context.Context, json.RawMessage) (any, error), secret, sid, query string) (found, response) {
	t.Helper()
	r := invoke(t, h, event(t, "http-api-find-tools.json", request{auth: secret, session: sid, body: findToolsBody(3, query, "")}))
	text, isErr := testenv.ResultText(t, result(t, r, 3))
	if isErr {
		t.Fatalf("find_tools %q: %s", query, text)
	}
	var f found
	if err := json.Unmarshal([]byte(text), &f); err != nil {
		t.Fatalf("find_tools %q: %v in %q", query, err, text)
	}
	return f, r
}

// retrieve calls POST /tool-rag/retrieve.
func retrieveREST(t testing.TB, h func(context.Context, json.RawMessage) (any, error), secret, body string) (tools []string, fallback bool) {
	t.Helper()
	r := invoke(t, h, event(t, "http-api-find-tools.json", request{auth: secret, body: body, path: "/tool-rag/retrieve"}))
	if r.status != http.StatusOK {
		t.Fatalf("retrieve: status %d %q", r.status, r.body)
	}
	var out struct {
		Results []struct {
			ToolID string `json:"tool_id"`
		} `json:"results"`
		FallbackUsed bool `json:"fallback_used"`
	}
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatalf("retrieve: %v in %q", err, r.body)
	}
	for _, x := range out.Results {
		tools = append(tools, x.ToolID)
	}
	return tools, out.FallbackUsed
}

func TestLambdaEndToEnd(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))

	// Sync with the scheduled sample event: registry → upstream → tools
	// table → index published to S3.
	rep := e.sync(t, string(event(t, "schedule-sync.json", request{})))
	if rep.Sync.Synced != 1 || rep.Index.Tools < 5 || rep.Index.Embedded != rep.Index.Tools || rep.Trigger != "Scheduled Event" {
		t.Fatalf("first sync: %+v", rep)
	}
	if _, _, err := s3bucket.New(e.s3.Client, testBucket).Get(context.Background(), "index/"+indexpub.PointerKey, ""); err != nil {
		t.Fatalf("no pointer published: %v", err)
	}

	// Cold start: the gateway loads the published index.
	g := e.gateway(t)
	if cs := g.ColdStart(); cs.IndexBytes == 0 || cs.Total <= 0 || g.Indexer.Stats().ToolsInIndex != rep.Index.Tools {
		t.Fatalf("cold start did not load the index: %+v, index %d tools", cs, g.Indexer.Stats().ToolsInIndex)
	}
	if g.CatalogSource() != "s3" {
		t.Fatalf("cold start read the catalog from %q; want the catalog copy published with the index", g.CatalogSource())
	}
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})

	t.Run("health", func(t *testing.T) {
		r := invoke(t, h, event(t, "http-api-health.json", request{}))
		if r.status != 200 || !strings.Contains(r.body, `"status":"ok"`) {
			t.Fatalf("/health: %d %q", r.status, r.body)
		}
	})

	sid := initialize(t, h, "http-api-initialize.json", devSecret)

	t.Run("http-api", func(t *testing.T) {
		r := invoke(t, h, event(t, "http-api-tools-list.json", request{session: sid}))
		var list struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(result(t, r, 2), &list); err != nil {
			t.Fatal(err)
		}
		if len(list.Tools) != 4 {
			t.Fatalf("agent tools/list before find_tools: %+v, want the 4 meta-tools", list.Tools)
		}

		f, r := findTools(t, h, devSecret, sid, "echo a message back")
		if f.FallbackUsed || len(f.Results) == 0 || !slices.Contains(f.names(), "echo__echo") {
			t.Fatalf("find_tools: %+v", f)
		}
		// A strict client learns about the registered tools from the
		// list_changed notification in the same response.
		if ct := r.header("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
			t.Fatalf("find_tools over HTTP API: Content-Type %q; want the buffered SSE body", ct)
		}
		if !hasNotification(t, r, "notifications/tools/list_changed") {
			t.Fatalf("find_tools SSE body lacks notifications/tools/list_changed: %q", r.body)
		}

		r = invoke(t, h, event(t, "http-api-run-tool.json", request{session: sid}))
		if text, isErr := testenv.ResultText(t, result(t, r, 4)); isErr || text != "hello from sam local" {
			t.Fatalf("run_tool: %q (error %v)", text, isErr)
		}

		// No key, wrong key.
		r = invoke(t, h, event(t, "http-api-run-tool.json", request{auth: "wrong", session: sid}))
		if r.status != http.StatusUnauthorized {
			t.Fatalf("wrong key: status %d", r.status)
		}
		// A listening GET cannot be held open in a Lambda invocation.
		r = invoke(t, h, event(t, "http-api-tools-list.json", request{session: sid, method: "GET"}))
		if r.status != http.StatusMethodNotAllowed {
			t.Fatalf("GET /mcp: status %d, want 405", r.status)
		}
	})

	t.Run("legacy session continues on another instance", func(t *testing.T) {
		b := lambdahttp.Dispatch(e.gateway(t), lambdahttp.Options{})
		r := invoke(t, b, event(t, "http-api-tools-list.json", request{session: sid}))
		var list struct {
			Tools []struct{ Name string } `json:"tools"`
		}
		if err := json.Unmarshal(result(t, r, 2), &list); err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, x := range list.Tools {
			names = append(names, x.Name)
		}
		if !slices.Contains(names, "echo__echo") || len(names) <= 4 {
			t.Fatalf("instance B tools/list for the session started on A: %v; want the tools find_tools registered on A", names)
		}
		r = invoke(t, b, event(t, "http-api-run-tool.json", request{session: sid}))
		if text, _ := testenv.ResultText(t, result(t, r, 4)); text != "hello from sam local" {
			t.Fatalf("run_tool on B: %q", text)
		}
		// A session id no instance issued is refused.
		r = invoke(t, b, event(t, "http-api-tools-list.json", request{session: session.NewID()}))
		if r.status != http.StatusNotFound {
			t.Fatalf("unknown session: status %d, want 404", r.status)
		}
	})

	t.Run("rest-api", func(t *testing.T) {
		rsid := initialize(t, h, "rest-api-initialize.json", devSecret)
		raw := event(t, "rest-api-initialize.json", request{session: rsid, body: findToolsBody(3, "reverse the characters of a text", "")})
		r := invoke(t, h, raw)
		text, isErr := testenv.ResultText(t, result(t, r, 3))
		if isErr || !strings.Contains(text, "echo__reverse") {
			t.Fatalf("find_tools over REST: %q", text)
		}
		if !hasNotification(t, r, "notifications/tools/list_changed") {
			t.Fatalf("find_tools over REST lacks list_changed: %q", r.body)
		}
	})

	t.Run("function-url", func(t *testing.T) {
		usid := initialize(t, h, "function-url-initialize.json", devSecret)
		raw := event(t, "function-url-initialize.json", request{session: usid, body: findToolsBody(3, "add two numbers", "")})
		r := invoke(t, h, raw)
		if r.status != 200 || !strings.HasPrefix(r.header("Content-Type"), "text/event-stream") {
			t.Fatalf("find_tools over a Function URL: %d %v", r.status, r.headers)
		}
		text, _ := testenv.ResultText(t, result(t, r, 3))
		if !strings.Contains(text, "echo__add") || !hasNotification(t, r, "notifications/tools/list_changed") {
			t.Fatalf("find_tools over a Function URL: %q", r.body)
		}
		// Buffered Function URLs get the HTTP API shape.
		buffered := lambdahttp.Dispatch(g, lambdahttp.Options{FunctionURLBuffered: true})
		out, err := buffered(context.Background(), event(t, "function-url-initialize.json", request{}))
		if err != nil {
			t.Fatal(err)
		}
		if resp, ok := out.(interface{ ContentType() string }); ok {
			t.Fatalf("buffered Function URL answered with a stream (%s)", resp.ContentType())
		}
	})

	t.Run("subscriptions/listen", func(t *testing.T) {
		body := `{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{}}`
		r := invoke(t, h, event(t, "http-api-find-tools.json", request{body: body}))
		ms := messages(t, r)
		if len(ms) != 1 || ms[0].Error == nil || !strings.Contains(ms[0].Error.Message, "Lambda") || string(ms[0].ID) != "9" {
			t.Fatalf("subscriptions/listen: %q", r.body)
		}
	})
}

func TestDispatchRejectsOtherEvents(t *testing.T) {
	h := lambdahttp.Dispatch(http.NotFoundHandler(), lambdahttp.Options{})
	for _, raw := range []string{`{"detail-type":"Scheduled Event","source":"aws.events"}`, `[1,2]`, `{}`} {
		if _, err := h(context.Background(), json.RawMessage(raw)); err == nil {
			t.Errorf("event %s was accepted", raw)
		}
	}
}

// A second sync (a server added upstream) swaps the index under a warm
// handler once the refresh interval has passed.
func TestIndexSwapUnderWarmHandler(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	first := e.sync(t, "")
	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	q := `{"query":"reverse text","allowed_servers":["echo2"]}`
	if tools, _ := retrieveREST(t, h, agentSecret, q); len(tools) != 0 {
		t.Fatalf("echo2 tools before it exists: %v", tools)
	}

	e.register(t, "echo2", startEcho(t))
	second := e.sync(t, `{"mode":"incremental"}`)
	if second.Index.Tools != 2*first.Index.Tools || second.Index.Reused != first.Index.Tools || second.Index.Embedded != first.Index.Tools {
		t.Fatalf("incremental sync re-embedded unchanged tools: first %+v, second %+v", first.Index, second.Index)
	}
	// Within the refresh interval the warm handler keeps its index.
	e.clock.Advance(g.cfg.IndexRefresh / 2)
	if tools, _ := retrieveREST(t, h, agentSecret, q); len(tools) != 0 {
		t.Fatalf("the index changed before the refresh interval: %v", tools)
	}
	e.clock.Advance(g.cfg.IndexRefresh)
	tools, fallback := retrieveREST(t, h, agentSecret, q)
	if fallback || len(tools) == 0 || !strings.HasPrefix(tools[0], "echo2__") {
		t.Fatalf("after the refresh interval: %v (fallback %v); want echo2 tools from the new index", tools, fallback)
	}
	if n := g.Indexer.Stats().ToolsInIndex; n != second.Index.Tools {
		t.Fatalf("warm handler index has %d tools, want %d", n, second.Index.Tools)
	}
	// The MCP surface was reloaded too: run_tool reaches the new server.
	sid := initialize(t, h, "http-api-initialize.json", devSecret)
	body := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo2__reverse","arguments":{"text":"abc"}}}}`
	r := invoke(t, h, event(t, "http-api-run-tool.json", request{session: sid, body: body}))
	if text, isErr := testenv.ResultText(t, result(t, r, 4)); isErr || text != "cba" {
		t.Fatalf("run_tool echo2__reverse: %q %v", text, isErr)
	}
}

// Two syncs at once: both succeed (the loser of the pointer's conditional
// write re-reads it and retries or yields to the newer build), and the
// published pointer names a complete index of the whole catalog.
func TestConcurrentSyncs(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.register(t, "echo2", startEcho(t))
	var wg sync.WaitGroup
	reps := make([]SyncReport, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			reps[i], errs[i] = runSync(context.Background(), e.config(t), "full")
		}(i)
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("sync %d: %v", i, err)
		}
	}
	ix, meta, err := indexpub.NewLoader(s3bucket.New(e.s3.Client, testBucket), "index/").Load(context.Background())
	if err != nil {
		t.Fatalf("the published pointer is not loadable: %v", err)
	}
	if ix.Len() != reps[0].Index.Tools || ix.Len() != reps[1].Index.Tools {
		t.Fatalf("published index has %d tools; the syncs built %d and %d", ix.Len(), reps[0].Index.Tools, reps[1].Index.Tools)
	}
	g := e.gateway(t)
	tools, _ := g.Catalog.ListTools(context.Background())
	for _, tl := range tools {
		if _, ok := meta.Hashes[tl.ID]; !ok {
			t.Errorf("catalog tool %s is not in the published index", tl.ID)
		}
	}
}

// A corrupt index object in S3: a cold start answers with the keyword
// fallback (fallback_used=true) and recovers after a good publish.
func TestCorruptIndexFallbackAndRecovery(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	b := s3bucket.New(e.s3.Client, testBucket)
	body, _, err := b.Get(context.Background(), "index/"+indexpub.PointerKey, "")
	if err != nil {
		t.Fatal(err)
	}
	var ptr indexpub.Pointer
	if err := json.Unmarshal(body, &ptr); err != nil {
		t.Fatal(err)
	}
	e.s3.PutRaw(t, testBucket, "index/"+ptr.Index, []byte("this is not a faiss index"))

	g := e.gateway(t)
	if g.CatalogSource() != "dynamodb" {
		t.Fatalf("without a usable index the catalog must come from the tools table, not %q", g.CatalogSource())
	}
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	tools, fallback := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if !fallback || len(tools) == 0 || tools[0] != "echo__reverse" {
		t.Fatalf("with a corrupt index: %v fallback=%v; want keyword results with fallback_used=true", tools, fallback)
	}
	sid := initialize(t, h, "http-api-initialize.json", devSecret)
	if f, _ := findTools(t, h, devSecret, sid, "reverse the characters of a text"); !f.FallbackUsed || len(f.Results) == 0 {
		t.Fatalf("find_tools with a corrupt index: %+v", f)
	}

	e.sync(t, `{"mode":"full"}`) // republishes (and repairs) the blob
	e.clock.Advance(g.cfg.IndexRefresh)
	tools, fallback = retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if fallback || len(tools) == 0 || tools[0] != "echo__reverse" {
		t.Fatalf("after a good publish: %v fallback=%v", tools, fallback)
	}
}

// A revoked key keeps working while its lookup is cached and is refused
// after the cache TTL.
func TestKeyRevokedWhileCached(t *testing.T) {
	e := newTestEnv(t)
	const ttl = 2 * time.Second
	g := e.gateway(t, func(c *Config) { c.KeyCacheTTL = ttl })
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	health := func() int {
		r := invoke(t, h, event(t, "http-api-health.json", request{auth: agentSecret, path: "/tool-rag/health"}))
		return r.status
	}
	first := time.Now()
	if s := health(); s != 200 {
		t.Fatalf("valid key: %d", s)
	}
	if err := e.keys.Revoke(context.Background(), "agent"); err != nil {
		t.Fatal(err)
	}
	s := health()
	if time.Since(first) < ttl {
		if s != 200 {
			t.Fatalf("revoked key within the cache TTL: %d, want 200 (cached)", s)
		}
	} else {
		t.Logf("machine too slow to check the cached window (%s elapsed)", time.Since(first))
	}
	time.Sleep(time.Until(first.Add(ttl + 50*time.Millisecond)))
	if s := health(); s != http.StatusUnauthorized {
		t.Fatalf("revoked key after the cache TTL: %d, want 401", s)
	}
}

// POST /tool-rag/reindex invokes the sync function asynchronously
// (InvocationType Event) or rebuilds in place, and says which.
func TestReindex(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")

	// A Lambda endpoint speaking the Invoke wire format; like Lambda, it
	// accepts the event (202) and runs the sync function afterwards.
	type call struct {
		path, invocationType string
		payload              SyncEvent
	}
	calls := make(chan call, 1)
	syncs := make(chan error, 1)
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var ev SyncEvent
		data, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(data, &ev)
		calls <- call{r.URL.Path, r.Header.Get("X-Amz-Invocation-Type"), ev}
		w.WriteHeader(http.StatusAccepted)
		go func() {
			s, err := NewSyncer(context.Background(), e.config(t))
			if err == nil {
				_, err = s.Handle(context.Background(), data)
				s.Close()
			}
			syncs <- err
		}()
	}))
	defer fake.Close()

	g := e.gateway(t, func(c *Config) {
		c.SyncFunction = "toolrag-sync"
		c.LambdaEndpoint = fake.URL
	})
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	reindex := func(h func(context.Context, json.RawMessage) (any, error), secret string) (int, map[string]any) {
		r := invoke(t, h, event(t, "http-api-find-tools.json", request{auth: secret, path: "/tool-rag/reindex", body: `{"mode":"full"}`}))
		var out map[string]any
		_ = json.Unmarshal([]byte(r.body), &out)
		return r.status, out
	}
	if s, _ := reindex(h, agentSecret); s != http.StatusForbidden {
		t.Fatalf("reindex with an agent key: %d", s)
	}
	s, out := reindex(h, "k-admin")
	st, _ := out["status"].(map[string]any)
	if s != 200 || st["how"] != "async" || st["function"] != "toolrag-sync" || st["invoke_status_code"] != float64(202) {
		t.Fatalf("async reindex: %d %v", s, out)
	}
	c := <-calls
	if c.path != "/2015-03-31/functions/toolrag-sync/invocations" || c.invocationType != "Event" || c.payload.Mode != "full" {
		t.Fatalf("Lambda Invoke call: %+v", c)
	}
	if err := <-syncs; err != nil {
		t.Fatalf("the invoked sync failed: %v", err)
	}

	inplace := lambdahttp.Dispatch(e.gateway(t, func(c *Config) { c.ReindexInPlace = true }), lambdahttp.Options{})
	s, out = reindex(inplace, "k-admin")
	st, _ = out["status"].(map[string]any)
	if s != 200 || st["how"] != "in_place" || st["tools"].(float64) < 5 {
		t.Fatalf("in-place reindex: %d %v", s, out)
	}
}

// The health function marks an unreachable server down; gateways withhold
// its tools after their health cache expires, and still serve the rest.
func TestHealthFunction(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	echo2 := startEcho(t)
	e.register(t, "echo2", echo2)
	e.sync(t, "")
	e.register(t, "dead", deadURL(t))

	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	q := `{"query":"reverse the characters","allowed_servers":["echo2"]}`
	if tools, _ := retrieveREST(t, h, agentSecret, q); len(tools) == 0 {
		t.Fatal("echo2 tools missing before any probe")
	}

	rep, err := probeHealth(context.Background(), e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Up, []string{"echo", "echo2"}) || rep.Down["dead"] == "" || len(rep.Down) != 1 {
		t.Fatalf("health report: %+v", rep)
	}
	hs, err := e.registry.Health(context.Background())
	if err != nil || hs["dead"].Status != "down" || hs["echo"].Status != "up" || hs["dead"].Error == "" {
		t.Fatalf("registry health: %+v %v", hs, err)
	}
	// Take echo2 down in the registry too, then let the cache expire.
	if err := e.registry.SetHealth(context.Background(), "echo2", hs["dead"]); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(g.cfg.HealthCacheTTL)
	if tools, _ := retrieveREST(t, h, agentSecret, q); len(tools) != 0 {
		t.Fatalf("tools of a server marked down: %v", tools)
	}
	if tools, _ := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters"}`); len(tools) == 0 || !strings.HasPrefix(tools[0], "echo__") {
		t.Fatalf("tools of the healthy server: %v", tools)
	}
}

// The catalog copy is used only when it belongs to the loaded index and is
// readable; otherwise the gateway scans the tools table, with the same
// result.
func TestCatalogCopy(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.register(t, "echo2", startEcho(t))
	if rep := e.sync(t, ""); rep.CatalogCopyErr != "" {
		t.Fatal(rep.CatalogCopyErr)
	}
	want, err := dynamo.NewToolStore(e.ddb, e.tables.Tools).ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	fingerprint := func(g *GatewayFunction) string {
		tools, _ := g.Catalog.ListTools(context.Background())
		servers, _ := g.Catalog.ListServers(context.Background())
		var b strings.Builder
		for _, tl := range tools {
			fmt.Fprintf(&b, "%s %s %s|", tl.ID, tl.ContentHash, tl.Status)
		}
		fmt.Fprintf(&b, "%d servers", len(servers))
		return b.String()
	}
	var wantFP strings.Builder
	for _, tl := range want {
		fmt.Fprintf(&wantFP, "%s %s %s|", tl.ID, tl.ContentHash, tl.Status)
	}
	wantFP.WriteString("2 servers")

	b := s3bucket.New(e.s3.Client, testBucket)
	tests := []struct {
		name   string
		damage func()
		source string
	}{
		{"published copy", func() {}, "s3"},
		{"copy of another index", func() {
			_, meta, _ := e.gateway(t).Indexer.Current()
			other := "0" + meta.IndexSHA256[1:] // another index's hash: change the first digit
			if meta.IndexSHA256[0] == '0' {
				other = "1" + meta.IndexSHA256[1:]
			}
			if err := indexpub.WriteCatalog(context.Background(), b, "index/", other, want[:1], nil, nil); err != nil {
				t.Fatal(err)
			}
		}, "dynamodb"},
		{"damaged copy", func() { e.s3.PutRaw(t, testBucket, "index/"+indexpub.CatalogKey, []byte("\x1f\x8b garbage")) }, "dynamodb"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.damage()
			g := e.gateway(t)
			if g.CatalogSource() != tc.source {
				t.Fatalf("catalog source %q, want %q", g.CatalogSource(), tc.source)
			}
			if got := fingerprint(g); got != wantFP.String() {
				t.Fatalf("catalog differs from the tools table:\n got %s\nwant %s", got, wantFP.String())
			}
		})
	}
}

func TestParseSyncEvent(t *testing.T) {
	tests := []struct {
		payload string
		want    string
		wantErr bool
	}{
		{"", "incremental", false},
		{"null", "incremental", false},
		{`{"version":"0","detail-type":"Scheduled Event","source":"aws.events","detail":{}}`, "incremental", false},
		{`{"mode":"full"}`, "full", false},
		{`{"mode":"incremental","source":"tool-rag/reindex"}`, "incremental", false},
		{`{"mode":"off"}`, "", true},
		{`{"mode":"fast"}`, "", true},
		{`[`, "", true},
	}
	for _, tc := range tests {
		mode, _, err := ParseSyncEvent([]byte(tc.payload))
		if (err != nil) != tc.wantErr || string(mode) != tc.want {
			t.Errorf("ParseSyncEvent(%q) = %q, %v", tc.payload, mode, err)
		}
	}
}

func TestSyncMarksUnreachableStale(t *testing.T) {
	e := newTestEnv(t)
	url := startEcho(t)
	e.register(t, "echo", url)
	first := e.sync(t, "")
	e.register(t, "echo", deadURL(t)) // the server moved away
	rep := e.sync(t, "")
	if rep.Sync.Stale["echo"] == "" || rep.Index.Tools != first.Index.Tools {
		t.Fatalf("unreachable server: %+v; its tools must stay (stale), not be deleted", rep)
	}
	g := e.gateway(t)
	tools, _ := g.Catalog.ListTools(context.Background())
	if len(tools) != first.Index.Tools || tools[0].Status == "active" {
		t.Fatalf("catalog after an unreachable sync: %d tools, status %q", len(tools), tools[0].Status)
	}
}

// S3 unavailable at cold start: the gateway starts anyway, answers with the
// keyword fallback over the DynamoDB tool records, and loads the index at
// the next refresh once S3 answers again.
func TestS3UnavailableAtColdStart(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")

	flaky := newGate(t, e.s3.URL, false)
	flaky.fail.Store(&failure{status: http.StatusServiceUnavailable, contentType: "application/xml",
		body: `<Error><Code>ServiceUnavailable</Code><Message>injected</Message></Error>`})
	g := e.gateway(t, func(c *Config) { c.S3, c.S3Endpoint = nil, flaky.URL })
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	tools, fallback := retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if !fallback || len(tools) == 0 || tools[0] != "echo__reverse" {
		t.Fatalf("S3 down at cold start: %v fallback=%v; want keyword results with fallback_used=true", tools, fallback)
	}
	flaky.fail.Store(nil)
	e.clock.Advance(g.cfg.IndexRefresh)
	tools, fallback = retrieveREST(t, h, agentSecret, `{"query":"reverse the characters of a text"}`)
	if fallback || len(tools) == 0 || tools[0] != "echo__reverse" {
		t.Fatalf("after S3 came back: %v fallback=%v; want the vector index", tools, fallback)
	}
}

// The sync function publishes the keyword analysis with the catalog copy
// and a cold start takes every tool's terms from it, ranking exactly like
// a gateway that analyses them; a damaged, missing or foreign analysis is
// logged and the gateway analyses the tools, with the same rankings.
func TestColdStartKeywordAnalysis(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.register(t, "echo2", startEcho(t))
	if rep := e.sync(t, ""); rep.CatalogCopyErr != "" {
		t.Fatal(rep.CatalogCopyErr)
	}
	ctx := context.Background()
	b := s3bucket.New(e.s3.Client, testBucket)
	ptr, err := indexpub.ReadPointer(ctx, b, "index/")
	if err != nil {
		t.Fatal(err)
	}
	cp, _, ok, err := indexpub.ReadCatalog(ctx, b, "index/", ptr.SHA256, "")
	if !ok || cp.KeywordsSHA256 == "" {
		t.Fatalf("catalog copy without a keyword analysis (ok %v, err %v)", ok, err)
	}
	queries := []string{"reverse the characters", "echo a message back", "add two numbers", "long running operation"}
	answers := func(g *GatewayFunction) string {
		var out strings.Builder
		for _, q := range queries {
			resp, err := g.App.Retriever.Retrieve(ctx, retrieve.Request{Query: q, TopK: 10, Policy: policy.Unrestricted()})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range resp.Results {
				fmt.Fprintf(&out, "%s=%v ", r.Tool.ID, r.Score)
			}
			out.WriteString("\n")
		}
		return out.String()
	}
	logged := func() (*GatewayFunction, string) {
		var logs bytes.Buffer
		g := e.gateway(t, func(c *Config) { c.Logger = slog.New(slog.NewTextHandler(&syncWriter{w: &logs}, nil)) })
		return g, logs.String()
	}
	g, _ := logged()
	tools := g.Catalog.Len()
	if tools == 0 || g.App.Retriever.PreparedTools() != tools {
		t.Fatalf("cold start took %d of %d tools from the published analysis; want all", g.App.Retriever.PreparedTools(), tools)
	}
	want := answers(g)

	key := "index/" + indexpub.KeywordsKey(cp.KeywordsSHA256)
	good, _, err := b.Get(ctx, key, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, log string
		damage    func()
	}{
		{"damaged blob", "keyword analysis published with the catalog copy unusable", func() {
			e.s3.PutRaw(t, testBucket, key, []byte("\x1f\x8b garbage"))
		}},
		{"missing blob", "keyword analysis published with the catalog copy unusable", func() {
			if err := b.Delete(ctx, key); err != nil {
				t.Fatal(err)
			}
		}},
		{"no analysis in the copy", "no keyword analysis published with the catalog copy", func() {
			e.s3.PutRaw(t, testBucket, key, good)
			if err := indexpub.WriteCatalog(ctx, b, "index/", ptr.SHA256, cp.Tools, cp.Servers, nil); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.damage()
			g, logs := logged()
			if n := g.App.Retriever.PreparedTools(); n != 0 {
				t.Fatalf("%d tools taken from an unusable analysis", n)
			}
			if !strings.Contains(logs, tc.log) {
				t.Errorf("no log line %q:\n%s", tc.log, logs)
			}
			if got := answers(g); got != want {
				t.Errorf("rankings differ from the analysed ones:\n got %s\nwant %s", got, want)
			}
		})
	}
}
