package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// freezeTable makes the gate hold every request naming table (DynamoDB
// not answering) until the returned function is called or the request
// gives up.
func freezeTable(g *gate, table string) (thaw func()) {
	thawed := make(chan struct{})
	g.fail.Store(&failure{match: func(r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"`+table+`"`)) {
			select {
			case <-thawed:
			case <-r.Context().Done():
			}
		}
		return false
	}})
	return func() { close(thawed); g.fail.Store(nil) }
}

// With the sessions table not answering, a request of a live session is
// answered 503 with Retry-After (the client retries and keeps its
// session), not 404 "Invalid session ID" (the client drops it); the error
// is logged and counted, and the session works again once DynamoDB does.
// The old code answered 404 after 5 s.
func TestSessionStoreDownIs503(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	dg := newGate(t, testenv.DynamoDB(t), false)
	client, err := dynamo.NewClient(context.Background(), dg.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	logs := &testenv.Buffer{}
	g := e.gateway(t, func(c *Config) {
		c.DynamoDB = client
		c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	})
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	sid := initialize(t, h, "http-api-initialize.json", devSecret)

	thaw := freezeTable(dg, e.tables.Sessions)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	r := invoke(t, h, event(t, "http-api-tools-list.json", request{auth: devSecret, session: sid, body: list}))
	if r.status != http.StatusServiceUnavailable || r.header("Retry-After") == "" {
		t.Fatalf("sessions table not answering: status %d Retry-After %q body %q; want 503 with Retry-After", r.status, r.header("Retry-After"), r.body)
	}
	if !strings.Contains(r.body, "session store is unavailable") || !strings.Contains(r.body, `"id":2`) {
		t.Errorf("503 body %q does not say why, or lacks the request's JSON-RPC id 2", r.body)
	}
	// initialize cannot store its session either: 503, no session id.
	r = invoke(t, h, event(t, "http-api-initialize.json", request{auth: devSecret}))
	if r.status != http.StatusServiceUnavailable || r.header("Mcp-Session-Id") != "" {
		t.Fatalf("initialize with the sessions table down: status %d session %q; want 503 without a session id", r.status, r.header("Mcp-Session-Id"))
	}
	if !strings.Contains(logs.String(), "session store unavailable") {
		t.Errorf("the store errors were not logged: %s", logs.String())
	}
	if n := g.SessionIDs.StoreErrors(); n < 2 {
		t.Errorf("session store errors counted: %d, want 2", n)
	}
	m := invoke(t, h, event(t, "http-api-health.json", request{auth: "k-admin", path: "/tool-rag/metrics", method: "GET"}))
	if !strings.Contains(m.body, "session_store_errors_total") {
		t.Errorf("/tool-rag/metrics lacks session_store_errors_total: %.300s", m.body)
	}

	thaw()
	r = invoke(t, h, event(t, "http-api-tools-list.json", request{auth: devSecret, session: sid, body: list}))
	if r.status != http.StatusOK {
		t.Fatalf("after DynamoDB came back: status %d %q; the session should still work", r.status, r.body)
	}
	result(t, r, 2)
}

// With the keys table not answering, a key that is not cached gets 503
// with Retry-After within the key lookup timeout.
func TestKeyStoreDownIs503(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	dg := newGate(t, testenv.DynamoDB(t), false)
	client, err := dynamo.NewClient(context.Background(), dg.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	g := e.gateway(t, func(c *Config) { c.DynamoDB = client })
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	initialize(t, h, "http-api-initialize.json", devSecret)
	if err := e.keys.Create(context.Background(), policy.Key{ID: "late", SecretHash: policy.HashSecret("k-late"), Servers: map[string]policy.Rule{"echo": {}}}); err != nil {
		t.Fatal(err)
	}
	thaw := freezeTable(dg, e.tables.Keys)
	defer thaw()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	r := invokeCtx(t, ctx, h, event(t, "http-api-initialize.json", request{auth: "k-late"}))
	if r.status != http.StatusServiceUnavailable || r.header("Retry-After") == "" {
		t.Fatalf("keys table not answering: status %d Retry-After %q body %q; want 503 with Retry-After", r.status, r.header("Retry-After"), r.body)
	}
	if ctx.Err() != nil {
		t.Fatal("the key lookup waited for the whole invocation instead of its own timeout")
	}
}

func runToolBody(id int, callName, args string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":%q,"arguments":%s}}}`, id, callName, args)
}

// A tool result under MCP_GATEWAY_MAX_RESULT_BYTES whose encoded Lambda
// response is over 6 MB ('<' is escaped as \u003c by the SSE JSON and its
// backslash again by the Lambda payload: 1.2 MB of text, ~8.4 MB payload)
// becomes a tool error that says so, and the payload stays under the
// limit. The old code returned the 8 MB payload (on AWS:
// Function.ResponseSizeTooLarge, and the instance exits).
//
// With results stored (the default), such a result is a resource_link
// instead (TestLongCallsLambda); this test turns storing off to reach the
// payload check behind it.
func TestResponseOverLambdaPayloadLimit(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	g := e.gateway(t, func(c *Config) { c.Env.MaxSpillBytes = 0 })
	for _, sample := range []string{"http-api-run-tool.json", "rest-api-initialize.json"} {
		t.Run(sample, func(t *testing.T) {
			h := lambdahttp.Dispatch(g, lambdahttp.Options{})
			init := "http-api-initialize.json"
			if strings.HasPrefix(sample, "rest") {
				init = sample
			}
			sid := initialize(t, h, init, devSecret)
			big := strings.Repeat("<", 1_200_000)
			raw := event(t, sample, request{auth: devSecret, session: sid, body: runToolBody(4, "echo__echo", fmt.Sprintf(`{"text":%q}`, big))})
			out, err := h(context.Background(), raw)
			if err != nil {
				t.Fatal(err)
			}
			payload, _ := json.Marshal(out)
			if len(payload) > lambdahttp.PayloadLimit {
				t.Fatalf("the Lambda response payload is %d bytes, over the 6 MB limit", len(payload))
			}
			r := invoke(t, h, raw)
			text, isErr := testenv.ResultText(t, result(t, r, 4))
			if !isErr || !strings.Contains(text, "exceeds the 6 MB Lambda response limit") || !strings.Contains(text, "result of ") {
				t.Fatalf("oversized result: isError=%v text %.300q", isErr, text)
			}
			// A result that fits is untouched.
			r = invoke(t, h, event(t, sample, request{auth: devSecret, session: sid, body: runToolBody(5, "echo__echo", `{"text":"<small>"}`)}))
			if text, isErr := testenv.ResultText(t, result(t, r, 5)); isErr || !strings.Contains(text, "<small>") {
				t.Fatalf("small result: isError=%v %q", isErr, text)
			}
		})
	}
}

// An upstream call that would outlive the invocation stops DefaultMargin
// before its deadline with a tool error that says why, and the answer is
// returned before the deadline. The old code let the call run to the
// deadline (on AWS: the function times out, API Gateway answers 503 and
// the instance is restarted).
func TestUpstreamCallBoundedByInvocationDeadline(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	sid := initialize(t, h, "http-api-initialize.json", devSecret)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := invokeCtx(t, ctx, h, event(t, "http-api-run-tool.json", request{auth: devSecret, session: sid, body: runToolBody(4, "echo__sleep", `{"ms":20000}`)}))
	if ctx.Err() != nil {
		t.Fatal("the answer came after the invocation deadline")
	}
	text, isErr := testenv.ResultText(t, result(t, r, 4))
	if !isErr || !strings.Contains(text, "AWS Lambda") || !strings.Contains(text, "Long-running tools") {
		t.Fatalf("call past the deadline: isError=%v %q", isErr, text)
	}
}

// The request that caused a cold start is on API Gateway's clock, which
// started before the init phase: when the load outlasts init, it gets the
// "still loading" 503 before API Gateway's timeout counted from the
// process start, not just before its own (later) invocation deadline. The
// old code waited until 1 s before the invocation deadline: with an 8 s
// init and a 29 s function, 36 s in all, and the client got API Gateway's
// own 503 instead.
func TestStillLoadingWithinFrontTimeout(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	s3gate := newGate(t, e.s3.URL, true) // S3 frozen
	t.Cleanup(func() { close(s3gate.open) })
	start := time.Now()
	g := e.gateway(t, func(c *Config) {
		c.S3, c.S3Endpoint, c.InitWait, c.frontTimeout = nil, s3gate.URL, time.Second, 4*time.Second
	})
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second) // the invocation's own deadline
	defer cancel()
	r := invokeCtx(t, ctx, h, event(t, "http-api-find-tools.json", request{auth: agentSecret, body: `{"query":"reverse a text"}`, path: "/tool-rag/retrieve"}))
	took := time.Since(start)
	if r.status != http.StatusServiceUnavailable || r.header("Retry-After") == "" || !strings.Contains(r.body, "still loading") {
		t.Fatalf("first request while loading: %d %q, want 503 with Retry-After", r.status, r.body)
	}
	if took > 10*time.Second {
		t.Fatalf("the 503 came %s after the process started, past API Gateway's timeout (4 s here)", took.Round(time.Millisecond))
	}
}

// blackhole is an MCP URL whose server accepts connections and never
// answers; it counts the connections.
func blackhole(t testing.TB) (url string, accepted *atomic.Int64) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int64{}
	var held []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			mu.Lock()
			held = append(held, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range held {
			c.Close()
		}
		mu.Unlock()
	})
	return "http://" + l.Addr().String() + "/mcp", accepted
}

// A cold start and the requests after it contact no upstream but the one
// a tool call is for: the prompts and resources come from what the sync
// function stored in the registry. The old code listed every upstream's
// prompts and resources at cold start (and on every catalog reload, inside
// a user's request), waiting UpstreamListTimeout on each that does not
// answer: 16 such servers took a cold start from 1.5 s to 11.8 s.
func TestColdStartContactsNoUpstream(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	var holes []*atomic.Int64
	for i := range 3 {
		u, n := blackhole(t)
		e.register(t, fmt.Sprintf("hole%d", i), u)
		holes = append(holes, n)
	}
	cfg := e.config(t)
	cfg.Env.SyncTimeout, cfg.UpstreamListTimeout = time.Second, time.Second
	s, err := NewSyncer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := s.Handle(context.Background(), json.RawMessage(`{}`))
	s.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Sync.Stale) != 3 || len(rep.SurfaceErrors) != 0 {
		t.Fatalf("sync: stale %v, surface errors %v; want the 3 silent servers stale and echo's surface stored", rep.Sync.Stale, rep.SurfaceErrors)
	}
	before := int64(0)
	for _, n := range holes {
		before += n.Load()
	}

	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	sid := initialize(t, h, "http-api-initialize.json", devSecret)
	r := invoke(t, h, event(t, "http-api-tools-list.json", request{auth: devSecret, session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"prompts/list"}`}))
	if res := string(result(t, r, 2)); !strings.Contains(res, "echo__greeting") {
		t.Fatalf("prompts/list: %s; want echo's stored prompt", res)
	}
	r = invoke(t, h, event(t, "http-api-tools-list.json", request{auth: devSecret, session: sid, body: `{"jsonrpc":"2.0","id":3,"method":"resources/list"}`}))
	if res := string(result(t, r, 3)); !strings.Contains(res, "echo") {
		t.Fatalf("resources/list: %s; want echo's stored resource", res)
	}
	findTools(t, h, devSecret, sid, "reverse a text")
	e.clock.Advance(g.cfg.CatalogMaxAge) // a catalog reload in the next request
	findTools(t, h, devSecret, sid, "reverse a text")
	after := int64(0)
	for _, n := range holes {
		after += n.Load()
	}
	if after != before {
		t.Fatalf("the gateway opened %d connections to upstreams nobody called (cold start and reload)", after-before)
	}
}

// emfSums adds up the values of each metric over EMF lines (counters are
// written as increases), checking each line's shape.
func emfSums(t *testing.T, out string) map[string]float64 {
	t.Helper()
	sums := map[string]float64{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("EMF line %q: %v", line, err)
		}
		aws, _ := doc["_aws"].(map[string]any)
		cwm, _ := aws["CloudWatchMetrics"].([]any)
		if len(cwm) != 1 || cwm[0].(map[string]any)["Namespace"] != metrics.DefaultEMFNamespace {
			t.Fatalf("EMF line without its directive: %.300s", line)
		}
		for _, m := range cwm[0].(map[string]any)["Metrics"].([]any) {
			name := m.(map[string]any)["Name"].(string)
			v, _ := doc[name].(float64)
			sums[name] += v
		}
	}
	return sums
}

// The gateway, sync and health functions write the /tool-rag/metrics
// counters as CloudWatch EMF lines: find_tools and run_tool latency and
// errors, auth failures, store errors, index age, catalog size.
func TestEMFMetrics(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	var syncOut testenv.Buffer
	cfg := e.config(t)
	cfg.metricsOut = &syncOut
	s, err := NewSyncer(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Handle(context.Background(), json.RawMessage(`{}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if sums := emfSums(t, syncOut.String()); sums["sync_runs_total"] != 1 || sums["sync_successes_total"] != 1 || sums["sync_failures_total"] != 0 {
		t.Fatalf("sync EMF: %v", sums)
	}

	var out testenv.Buffer
	g := e.gateway(t, func(c *Config) { c.metricsOut, c.MetricsInterval = &out, time.Nanosecond })
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	sid := initialize(t, h, "http-api-initialize.json", devSecret)
	findTools(t, h, devSecret, sid, "reverse a text")
	invoke(t, h, event(t, "http-api-run-tool.json", request{auth: devSecret, session: sid, body: runToolBody(4, "echo__echo", `{"text":"hi"}`)}))
	invoke(t, h, event(t, "http-api-run-tool.json", request{auth: devSecret, session: sid, body: runToolBody(5, "echo__fail", `{}`)}))
	invoke(t, h, event(t, "http-api-initialize.json", request{auth: "wrong-key"}))
	sums := emfSums(t, out.String())
	for name, want := range map[string]float64{
		"mcp_tool_requests_total{tool=find_tools}":         1,
		"mcp_tool_duration_seconds_count{tool=find_tools}": 1,
		"mcp_tool_requests_total{tool=run_tool}":           2,
		"mcp_tool_errors_total{tool=run_tool}":             1,
		"auth_failures_total":                              1,
	} {
		if sums[name] != want {
			t.Errorf("%s: %v, want %v", name, sums[name], want)
		}
	}
	for _, name := range []string{"tools_in_db", "index_age_seconds", "session_store_errors_total", "auth_lookup_errors_total", "auth_rate_limited_total", "dynamodb_throttles_total"} {
		if _, ok := sums[name]; !ok {
			t.Errorf("EMF lacks %s", name)
		}
	}
	if sums["mcp_tool_duration_seconds_p99{tool=find_tools}"] <= 0 {
		t.Errorf("no find_tools latency: %v", sums)
	}
}

// Rate limits: per instance by default (two instances let a key through
// twice as often); with TOOL_RAG_RATE_LIMIT=exact, across instances.
func TestExactRateLimitAcrossInstances(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, "")
	if err := e.keys.Create(context.Background(), policy.Key{ID: "limited", SecretHash: policy.HashSecret("k-limited"),
		Servers: map[string]policy.Rule{"echo": {}}, RateLimit: policy.RateLimit{Rate: 3.0 / 86400, Burst: 3}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode string
		want int
	}{{RateLimitInstance, 6}, {RateLimitExact, 3}} {
		t.Run(c.mode, func(t *testing.T) {
			var hs []func(context.Context, json.RawMessage) (any, error)
			for range 2 {
				g := e.gateway(t, func(cfg *Config) { cfg.RateLimit, cfg.RateLimitWindow = c.mode, 24*time.Hour })
				hs = append(hs, lambdahttp.Dispatch(g, lambdahttp.Options{}))
			}
			passed := 0
			var last response
			for i := range 10 {
				last = invoke(t, hs[i%2], event(t, "http-api-find-tools.json", request{auth: "k-limited", body: `{"query":"reverse"}`, path: "/tool-rag/retrieve"}))
				switch last.status {
				case http.StatusOK:
					passed++
				case http.StatusTooManyRequests:
					if last.header("Retry-After") == "" {
						t.Fatalf("429 without Retry-After: %q", last.body)
					}
				default:
					t.Fatalf("status %d %q", last.status, last.body)
				}
			}
			if passed != c.want {
				t.Fatalf("%s: %d of 10 requests over two instances passed a limit of 3 per day; want %d (last: %q)", c.mode, passed, c.want, last.body)
			}
		})
	}
}

// Prompts and resources of a server the health function marked down are
// withheld like its tools: at cold start, and on the first request after
// the health cache expires (then shown again once it is back up).
func TestStoredSurfacesOfDownServersWithheld(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.register(t, "echo2", startEcho(t))
	if rep := e.sync(t, ""); len(rep.SurfaceErrors) != 0 {
		t.Fatalf("surface errors: %v", rep.SurfaceErrors)
	}
	ctx := context.Background()
	list := func(h func(context.Context, json.RawMessage) (any, error), method string) string {
		t.Helper()
		sid := initialize(t, h, "http-api-initialize.json", devSecret)
		r := invoke(t, h, event(t, "http-api-tools-list.json", request{auth: devSecret, session: sid, body: `{"jsonrpc":"2.0","id":2,"method":"` + method + `"}`}))
		return string(result(t, r, 2))
	}
	shows := func(h func(context.Context, json.RawMessage) (any, error), echo2 bool) {
		t.Helper()
		prompts, resources := list(h, "prompts/list"), list(h, "resources/list")
		if !strings.Contains(prompts, `"echo__greeting"`) || !strings.Contains(resources, "gateway://echo/") {
			t.Fatalf("echo's surface missing: prompts %s resources %s", prompts, resources)
		}
		if got := strings.Contains(prompts, `"echo2__greeting"`); got != echo2 {
			t.Fatalf("echo2's prompt shown %v, want %v: %s", got, echo2, prompts)
		}
		if got := strings.Contains(resources, "gateway://echo2/"); got != echo2 {
			t.Fatalf("echo2's resources shown %v, want %v: %s", got, echo2, resources)
		}
	}
	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	shows(h, true)

	down := dynamo.Health{Status: dynamo.HealthDown, CheckedAt: e.clock.Now(), Error: "connection refused"}
	if err := e.registry.SetHealth(ctx, "echo2", down); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(g.cfg.HealthCacheTTL)
	shows(h, false)
	// A cold start while it is down.
	shows(lambdahttp.Dispatch(e.gateway(t), lambdahttp.Options{}), false)

	if err := e.registry.SetHealth(ctx, "echo2", dynamo.Health{Status: dynamo.HealthUp, CheckedAt: e.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(g.cfg.HealthCacheTTL)
	shows(h, true)
}
