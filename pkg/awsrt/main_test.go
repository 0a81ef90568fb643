package awsrt

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// One DynamoDB Local for the whole test binary (see internal/testenv).
func TestMain(m *testing.M) { testenv.Main(m) }

const (
	testBucket = "toolrag-index"
	// devSecret is the key in the events/ samples.
	devSecret   = "dev-key-full-access"
	agentSecret = "k-agent"
)

var (
	ddbOnce   sync.Once
	ddbClient *dynamodb.Client
	ddbErr    error
)

func testDynamo(t testing.TB) *dynamodb.Client {
	t.Helper()
	ep := testenv.DynamoDB(t)
	ddbOnce.Do(func() { ddbClient, ddbErr = dynamo.NewClient(context.Background(), ep, nil) })
	if ddbErr != nil {
		t.Fatal(ddbErr)
	}
	return ddbClient
}

// startEcho runs servers/echo over Streamable HTTP and returns its MCP
// URL.
func startEcho(t testing.TB) string { return testenv.StartEcho(t) }

// deadURL is an MCP URL where nothing listens.
func deadURL(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr + "/mcp"
}

// clock is a settable clock for the refresh checks.
type clock struct{ ns atomic.Int64 }

func newClock() *clock {
	c := &clock{}
	c.ns.Store(time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *clock) Now() time.Time          { return time.Unix(0, c.ns.Load()) }
func (c *clock) Advance(d time.Duration) { c.ns.Add(int64(d)) }

// testEnv is one deployment: its own tables and bucket, shared emulators.
type testEnv struct {
	ddb      *dynamodb.Client
	tables   dynamo.Tables
	s3       *s3test.Server
	clock    *clock
	registry *dynamo.RegistryStore
	keys     *dynamo.KeyStore
	emb      embed.Embedder
}

func newTestEnv(t testing.TB) *testEnv {
	t.Helper()
	c := testDynamo(t)
	prefix := testenv.UniqueName(t, "a-")
	tb := dynamo.Tables{Tools: prefix + "-tools", Keys: prefix + "-keys", Registry: prefix + "-registry", Sessions: prefix + "-sessions"}
	if err := dynamo.CreateTables(context.Background(), c, tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, name := range []string{tb.Tools, tb.Keys, tb.Registry, tb.Sessions} {
			_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
		}
	})
	e := &testEnv{
		ddb: c, tables: tb, s3: s3test.New(t, testBucket), clock: newClock(),
		registry: dynamo.NewRegistryStore(c, tb.Registry), keys: dynamo.NewKeyStore(c, tb.Keys),
		emb: embed.NewBuiltin(),
	}
	for _, k := range []policy.Key{
		{ID: "dev", SecretHash: policy.HashSecret(devSecret), Servers: map[string]policy.Rule{"echo": {}, "echo2": {}, "dead": {}}},
		{ID: "agent", SecretHash: policy.HashSecret(agentSecret), Servers: map[string]policy.Rule{"echo": {}, "echo2": {}, "dead": {}}},
		{ID: "admin", SecretHash: policy.HashSecret("k-admin"), Admin: true, Servers: map[string]policy.Rule{"echo": {}, "echo2": {}}},
	} {
		if err := e.keys.Create(context.Background(), k); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func (e *testEnv) register(t testing.TB, id, url string) {
	t.Helper()
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: url})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.registry.PutServer(context.Background(), id, doc); err != nil {
		t.Fatal(err)
	}
}

func testLogger() *slog.Logger {
	if os.Getenv("TOOLRAG_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return slog.New(slog.DiscardHandler)
}

func (e *testEnv) config(t testing.TB) Config {
	t.Helper()
	env, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	env.SyncTimeout = 10 * time.Second
	env.HealthTimeout = 3 * time.Second
	return Config{
		Env: env, Tables: e.tables, Bucket: testBucket, Prefix: "index/",
		IndexRefresh: 30 * time.Second, KeyCacheTTL: 30 * time.Second, HealthCacheTTL: 30 * time.Second,
		UpstreamListTimeout: 3 * time.Second,
		DynamoDB:            e.ddb, S3: e.s3.Client, Embedder: e.emb,
		Logger: testLogger(), Now: e.clock.Now, metricsOut: io.Discard,
	}
}

func (e *testEnv) sync(t testing.TB, event string) SyncReport {
	t.Helper()
	s, err := NewSyncer(context.Background(), e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rep, err := s.Handle(context.Background(), json.RawMessage(event))
	if err != nil {
		t.Fatalf("sync: %v (%+v)", err, rep)
	}
	return rep
}

func (e *testEnv) gateway(t testing.TB, mutate ...func(*Config)) *GatewayFunction {
	t.Helper()
	cfg := e.config(t)
	for _, m := range mutate {
		m(&cfg)
	}
	g, err := NewGatewayFunction(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	return g
}

// ---- Lambda events ----

// loadEvent reads events/<name> as a generic JSON object.
func loadEvent(t testing.TB, name string) map[string]any {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(testenv.Root(t), "events", name))
	if err != nil {
		t.Fatal(err)
	}
	var ev map[string]any
	if err := json.Unmarshal(data, &ev); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return ev
}

// request is what to change in a sample event.
type request struct {
	auth    string // bearer secret; "" keeps the sample's
	session string // Mcp-Session-Id; "" removes it
	body    string // "" keeps the sample's
	method  string // HTTP method override (2.0 events)
	path    string
	headers map[string]string // set after the others
}

// event returns the sample event with r applied, as the raw JSON Lambda
// would deliver.
func event(t testing.TB, name string, r request) json.RawMessage {
	t.Helper()
	ev := loadEvent(t, name)
	hdrKey := "headers"
	headers, _ := ev[hdrKey].(map[string]any)
	mv, _ := ev["multiValueHeaders"].(map[string]any)
	set := func(k, v string) {
		for hk := range headers {
			if strings.EqualFold(hk, k) {
				delete(headers, hk)
			}
		}
		for hk := range mv {
			if strings.EqualFold(hk, k) {
				delete(mv, hk)
			}
		}
		if v != "" {
			headers[k] = v
			if mv != nil {
				mv[k] = []any{v}
			}
		}
	}
	set("content-length", "")
	if r.auth != "" {
		set("authorization", "Bearer "+r.auth)
	}
	set("mcp-session-id", r.session)
	if r.session != "" {
		set("mcp-protocol-version", "2025-11-25")
	}
	if r.body != "" {
		ev["body"] = r.body
	}
	for k, v := range r.headers {
		set(k, v)
	}
	if r.method != "" || r.path != "" {
		rc := ev["requestContext"].(map[string]any)
		if h, ok := rc["http"].(map[string]any); ok {
			if r.method != "" {
				h["method"] = r.method
			}
			if r.path != "" {
				h["path"] = r.path
				ev["rawPath"] = r.path
			}
		}
	}
	raw, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// response is a Lambda HTTP response of any of the three front ends.
type response struct {
	status  int
	headers map[string]string
	body    string
}

func (r response) header(k string) string {
	for hk, v := range r.headers {
		if strings.EqualFold(hk, k) {
			return v
		}
	}
	return ""
}

// invoke runs a Lambda handler the way the runtime does: raw event in,
// the value serialised (or streamed) out.
func invoke(t testing.TB, h func(context.Context, json.RawMessage) (any, error), raw json.RawMessage) response {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return invokeCtx(t, ctx, h, raw)
}

// invokeCtx is invoke with the invocation's context (its deadline is the
// function's).
func invokeCtx(t testing.TB, ctx context.Context, h func(context.Context, json.RawMessage) (any, error), raw json.RawMessage) response {
	t.Helper()
	out, err := h(ctx, raw)
	if err != nil {
		t.Fatalf("handler: %v", err)
	}
	switch v := out.(type) {
	case events.APIGatewayV2HTTPResponse:
		return response{v.StatusCode, v.Headers, v.Body}
	case events.APIGatewayProxyResponse:
		hdr := map[string]string{}
		for k, v := range v.Headers {
			hdr[k] = v
		}
		for k, vs := range v.MultiValueHeaders {
			hdr[k] = strings.Join(vs, ",")
		}
		return response{v.StatusCode, hdr, v.Body}
	case *events.LambdaFunctionURLStreamingResponse:
		// What the runtime sends: a JSON prelude, 8 NUL bytes, the body.
		all, err := io.ReadAll(v)
		if err != nil {
			t.Fatal(err)
		}
		prelude, body, ok := strings.Cut(string(all), "\x00\x00\x00\x00\x00\x00\x00\x00")
		if !ok {
			t.Fatalf("streaming response without the prelude separator: %q", all)
		}
		var p struct {
			StatusCode int               `json:"statusCode"`
			Headers    map[string]string `json:"headers"`
		}
		if err := json.Unmarshal([]byte(prelude), &p); err != nil {
			t.Fatalf("prelude %q: %v", prelude, err)
		}
		return response{p.StatusCode, p.Headers, body}
	}
	t.Fatalf("handler returned %T", out)
	return response{}
}

// rpcMessage is one JSON-RPC message of a response body.
type rpcMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// messages parses a JSON or SSE body into its JSON-RPC messages.
func messages(t testing.TB, r response) []rpcMessage {
	t.Helper()
	var out []rpcMessage
	if strings.HasPrefix(r.header("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(r.body))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m rpcMessage
				if err := json.Unmarshal([]byte(data), &m); err != nil {
					t.Fatalf("SSE data %q: %v", data, err)
				}
				out = append(out, m)
			}
		}
		return out
	}
	var m rpcMessage
	if err := json.Unmarshal([]byte(r.body), &m); err != nil {
		t.Fatalf("status %d body %q: %v", r.status, r.body, err)
	}
	return append(out, m)
}

// result returns the result of the response to request id.
func result(t testing.TB, r response, id int) json.RawMessage {
	t.Helper()
	for _, m := range messages(t, r) {
		if string(m.ID) == fmt.Sprint(id) {
			if m.Error != nil {
				t.Fatalf("request %d: JSON-RPC error %d %s", id, m.Error.Code, m.Error.Message)
			}
			return m.Result
		}
	}
	t.Fatalf("no response to request %d in status %d body %q", id, r.status, r.body)
	return nil
}

func hasNotification(t testing.TB, r response, method string) bool {
	for _, m := range messages(t, r) {
		if m.Method == method {
			return true
		}
	}
	return false
}

type found struct {
	Results []struct {
		CallName string `json:"call_name"`
	} `json:"results"`
	FallbackUsed bool `json:"fallback_used"`
}

func (f found) names() []string {
	var out []string
	for _, r := range f.Results {
		out = append(out, r.CallName)
	}
	return out
}

func findToolsBody(id int, query string, extra string) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":%q,"top_k":5%s}}}`, id, query, extra)
}

// runSync runs one sync with a fresh Syncer (the Lambda keeps one warm).
func runSync(ctx context.Context, cfg Config, mode indexer.Mode) (SyncReport, error) {
	s, err := NewSyncer(ctx, cfg)
	if err != nil {
		return SyncReport{}, err
	}
	defer s.Close()
	return s.RunServers(ctx, mode, nil)
}

// probeHealth runs one probe round with a fresh Prober.
func probeHealth(ctx context.Context, cfg Config) (HealthReport, error) {
	p, err := NewProber(ctx, cfg)
	if err != nil {
		return HealthReport{}, err
	}
	defer p.Close()
	return p.Run(ctx)
}
