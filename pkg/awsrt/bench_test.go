package awsrt

// Benchmarks for docs/aws-runtime.md. They seed a synthetic catalog of
// TOOLRAG_AWSRT_BENCH_TOOLS tools (default 10000) into DynamoDB Local and
// publish its index to gofakes3, once per test binary, so only -bench runs
// pay for it. The cold-start benchmarks run with the 8-bit index and the
// float32 one (TOOLRAG_AWSRT_BENCH_INDEX selects):
//
//	go test -run '^$' -bench . -benchtime 5x ./pkg/awsrt/

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/writeplan"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

var (
	verbs = []string{"list", "get", "create", "update", "delete", "search", "export", "import", "archive", "send",
		"schedule", "approve", "assign", "close", "merge", "tag", "summarize", "translate", "convert", "validate"}
	nouns = []string{"issue", "pull_request", "invoice", "customer", "file", "calendar_event", "ticket", "order",
		"message", "repository", "dashboard", "alert", "contact", "payment", "deployment", "document", "task",
		"subscription", "report", "user", "channel", "spreadsheet", "build", "incident", "lead"}
	domains = []string{"github", "jira", "stripe", "slack", "gdrive", "salesforce", "pagerduty", "notion",
		"zendesk", "hubspot", "gitlab", "linear", "asana", "shopify", "datadog", "confluence"}
)

// syntheticTools returns n tools spread over servers of 100 tools each.
func syntheticTools(n int) map[string][]catalog.Tool {
	r := rand.New(rand.NewPCG(7, 7))
	out := map[string][]catalog.Tool{}
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	for i := range n {
		srv := fmt.Sprintf("%s%03d", domains[(i/100)%len(domains)], i/100)
		v, o := verbs[r.IntN(len(verbs))], nouns[r.IntN(len(nouns))]
		noun := strings.ReplaceAll(o, "_", " ")
		t := catalog.Tool{
			Server: srv, Name: fmt.Sprintf("%s_%s_%d", v, o, i),
			Description: fmt.Sprintf("%s a %s in %s (%s). Returns the %s with its id, status, owner and timestamps. Use it when the user asks to %s %ss.",
				strings.ToUpper(v[:1])+v[1:], noun, domains[(i/100)%len(domains)], srv, noun, v, noun),
			InputSchema: json.RawMessage(fmt.Sprintf(`{"type":"object","properties":{"%s_id":{"type":"string","description":"The %s id."},"limit":{"type":"integer","description":"Maximum results."},"query":{"type":"string"}},"required":["%s_id"]}`, o, noun, o)),
			UpdatedAt:   now,
		}
		catalog.Finalize(&t)
		out[srv] = append(out[srv], t)
	}
	return out
}

const benchSecret = "k-bench"

// benchDeployment is a seeded deployment shared by the benchmarks.
type benchDeployment struct {
	env     *testEnv
	n       int
	echoURL string
	seed    time.Duration
	ix      *indexer.Indexer // the build (float32 vectors)

	// indexes holds the build as "flat" (float32) and "sq8" (8-bit
	// codes); published says which one is current in the bucket.
	indexes     map[string]*vindex.Index
	catalog     catalog.Reader // what the index and the catalog copy are built from
	meta        vindex.Meta
	published   string
	republished int           // variants published by republish
	variant     *vindex.Index // the last variant republish published
	binaryCopy  []byte        // the catalog copy as published (see copyEncoding)
}

// benchIndexes returns the index encodings to benchmark:
// TOOLRAG_AWSRT_BENCH_INDEX (comma-separated; default "sq8,flat": the
// 8-bit index and the float32 one before it, A/B in one run).
func benchIndexes() []string {
	if v := os.Getenv("TOOLRAG_AWSRT_BENCH_INDEX"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"sq8", "flat"}
}

// use publishes the deployment's index in encoding enc ("flat" or "sq8")
// with its catalog copy, as a sync would, unless it is already current.
func (d *benchDeployment) use(b *testing.B, enc string) {
	b.Helper()
	if d.published == enc {
		return
	}
	ix, ok := d.indexes[enc]
	if !ok {
		b.Fatalf("unknown index encoding %q (want flat or sq8)", enc)
	}
	ctx := context.Background()
	bucket := s3bucket.New(d.env.s3.Client, testBucket)
	pub := indexpub.NewPublisher(bucket, "index/")
	pub.BeforeSwitch = func(ctx context.Context, ptr indexpub.Pointer) error {
		return indexpub.PublishCatalog(ctx, d.catalog, bucket, "index/", ptr.SHA256, retrieve.NewKeywordAnalyser())
	}
	meta := d.meta
	meta.BuiltAt, meta.IndexSHA256 = time.Now(), ""
	if _, err := pub.Publish(ctx, ix, meta); err != nil {
		b.Fatal(err)
	}
	d.published, d.binaryCopy = enc, nil
}

var (
	benchMu   sync.Mutex
	benchDeps = map[int]*benchDeployment{}
)

func benchTools() int {
	if v := os.Getenv("TOOLRAG_AWSRT_BENCH_TOOLS"); v != "" {
		if n, err := strconv.Atoi(v); err == nil && n > 0 {
			return n
		}
	}
	return 10000
}

// benchDeploy seeds n synthetic tools plus the echo server into tables and
// a bucket that live as long as the test binary.
func benchDeploy(b *testing.B, n int) *benchDeployment {
	b.Helper()
	benchMu.Lock()
	defer benchMu.Unlock()
	if d := benchDeps[n]; d != nil {
		return d
	}
	start := time.Now()
	// Tables outlive the benchmark function (Go calls it several times).
	e := newBenchEnv(b)
	d := &benchDeployment{env: e, n: n, echoURL: startEchoForBinary(b)}
	e.register(b, "echo", d.echoURL)
	e.sync(b, "") // echo's tools via the real sync path
	// Seeding and scanning 100k tools is a bulk job no request does: its
	// client has no per-operation timeout (DynamoDB Local's scans of a
	// 100k-item table outlast the gateway's 12 s).
	store := dynamo.NewToolStore(bulkDynamo(b), e.tables.Tools)
	ctx := context.Background()
	grants := map[string]policy.Rule{"echo": {}}
	for srv := range syntheticTools(n) {
		grants[srv] = policy.Rule{}
	}
	if err := e.keys.Create(ctx, policy.Key{ID: "bench", SecretHash: policy.HashSecret(benchSecret), Servers: grants}); err != nil {
		b.Fatal(err)
	}
	// TOOLRAG_AWSRT_BENCH_SEED=copy: the synthetic tools go into the
	// index and the S3 catalog copy only (the records the tools table
	// would hold, from the same preparation), not into DynamoDB Local,
	// whose 100k-item writes take most of an hour on a busy machine.
	// Only the catalog=s3 cold starts can run then.
	var cat catalog.Reader = store
	if os.Getenv("TOOLRAG_AWSRT_BENCH_SEED") == "copy" {
		tools, err := store.ListTools(ctx)
		if err != nil {
			b.Fatal(err)
		}
		servers, err := store.ListServers(ctx)
		if err != nil {
			b.Fatal(err)
		}
		for id, st := range syntheticTools(n) {
			srv, next, err := writeplan.Prepare(catalog.Server{ID: id, Title: id, Status: catalog.StatusActive, SyncedAt: time.Now()}, st, time.Now())
			if err != nil {
				b.Fatal(err)
			}
			servers, tools = append(servers, srv), append(tools, next...)
		}
		mem := catalog.NewCopy(store)
		mem.Set(tools, servers)
		cat = mem
		b.Logf("TOOLRAG_AWSRT_BENCH_SEED=copy: %d tools in the index and the catalog copy only", len(tools))
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	errs := make(chan error, 1)
	for srv, tools := range syntheticTools(n) {
		if cat != catalog.Reader(store) {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			if _, _, err := store.ReplaceServerTools(ctx, catalog.Server{ID: srv, Title: srv, Status: catalog.StatusActive, SyncedAt: time.Now()}, tools); err != nil {
				select {
				case errs <- err:
				default:
				}
			}
		}()
	}
	wg.Wait()
	select {
	case err := <-errs:
		b.Fatal(err)
	default:
	}
	// The index build the sync function would do after syncer.Run.
	// Built float32 and published as such; use publishes the 8-bit copy.
	ix, err := indexer.New(indexer.Config{Catalog: cat, Embedder: e.emb, Bucket: s3bucket.New(e.s3.Client, testBucket), Prefix: "index/", Flat: true})
	if err != nil {
		b.Fatal(err)
	}
	res, err := ix.Build(ctx, indexer.ModeFull)
	if err != nil {
		b.Fatal(err)
	}
	if res.Tools < n {
		b.Fatalf("index has %d tools, want at least %d", res.Tools, n)
	}
	// ... and the catalog copy the sync function writes after it.
	_, meta, _ := ix.Current()
	if err := indexpub.PublishCatalog(ctx, cat, s3bucket.New(e.s3.Client, testBucket), "index/", meta.IndexSHA256, retrieve.NewKeywordAnalyser()); err != nil {
		b.Fatal(err)
	}
	d.seed = time.Since(start)
	d.ix = ix
	flatIx, _, _ := ix.Current()
	d.indexes = map[string]*vindex.Index{"flat": flatIx, "sq8": flatIx.Quantize(nil)}
	d.meta, d.published, d.catalog = meta, "flat", cat
	b.Logf("seeded %d tools (+echo) in %s; index build %s", n, d.seed.Round(time.Millisecond), res.Duration.Round(time.Millisecond))
	benchDeps[n] = d
	return d
}

// bulkDynamo is a DynamoDB Local client without the gateway's timeouts.
func bulkDynamo(b *testing.B) *dynamodb.Client {
	return dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(testenv.DynamoDB(b)),
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
	})
}

// newBenchEnv is newTestEnv with cleanups tied to the process, not to one
// benchmark run.
func newBenchEnv(b *testing.B) *testEnv {
	return newTestEnv(processTB{b})
}

// processTB forwards to a benchmark but never registers cleanups: the
// seeded deployment is reused by every run of every benchmark and goes
// away with the test binary (DynamoDB Local is in memory).
type processTB struct{ *testing.B }

func (processTB) Cleanup(func()) {}

// startEchoForBinary starts the echo server for the seeded deployment
// (reused by every run) and stops it when the test binary ends, so that
// make bench-aws leaves no echo server behind.
func startEchoForBinary(b *testing.B) string { return startEcho(exitTB{b}) }

// exitTB is processTB whose cleanups run when the test binary ends
// (testenv.Main). Only for cleanups that do not use the TB.
type exitTB struct{ *testing.B }

func (exitTB) Cleanup(fn func()) { testenv.AtExit(fn) }

// rawGet reads the current pointer, meta and index blob with plain
// single GetObject calls: the baseline for the load.
func rawGet(b *testing.B, c *s3.Client) (time.Duration, int64) {
	ctx := context.Background()
	get := func(key string) []byte {
		out, err := c.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(testBucket), Key: aws.String(key)})
		if err != nil {
			b.Fatal(err)
		}
		defer out.Body.Close()
		data, err := io.ReadAll(out.Body)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	start := time.Now()
	ptrBody := get("index/" + indexpub.PointerKey)
	var ptr indexpub.Pointer
	if err := json.Unmarshal(ptrBody, &ptr); err != nil {
		b.Fatal(err)
	}
	n := int64(len(ptrBody))
	n += int64(len(get("index/" + ptr.Meta)))
	n += int64(len(get("index/" + ptr.Index)))
	return time.Since(start), n
}

func heapMB() float64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return float64(ms.HeapAlloc) / (1 << 20)
}

// writeHeapProfile writes the live heap (after a GC) to path, for
// go tool pprof -sample_index=inuse_space.
func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}

// startCPUProfile starts a CPU profile written to path-name-N (N counts
// the profiles of one name) and returns its stop; with path empty it does
// nothing.
func startCPUProfile(b *testing.B, path, name string) (stop func()) {
	if path == "" {
		return func() {}
	}
	profileSeq++
	f, err := os.Create(fmt.Sprintf("%s-%s-%d", path, name, profileSeq))
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}

var profileSeq int

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// BenchmarkColdStart measures NewGatewayFunction (fresh SDK clients) plus the first
// initialize + find_tools through the Lambda handler, split into its
// parts, against plain GETs of the same objects.
func BenchmarkColdStart(b *testing.B) {
	d := benchDeploy(b, benchTools())
	for _, enc := range benchIndexes() {
		sources := []string{"s3", "dynamodb"}
		if v := os.Getenv("TOOLRAG_AWSRT_BENCH_SOURCES"); v != "" {
			sources = strings.Split(v, ",") // e.g. s3: skip the table scans at 100k
		}
		for _, source := range sources {
			b.Run("index="+enc+"/catalog="+source, func(b *testing.B) {
				d.use(b, enc)
				coldStart(b, d, source)
			})
		}
	}
}

func coldStart(b *testing.B, d *benchDeployment, source string) {
	e := d.env
	if source == "dynamodb" {
		// Without the catalog copy the gateway scans the tools table.
		bk := s3bucket.New(e.s3.Client, testBucket)
		saved, _, err := bk.Get(context.Background(), "index/"+indexpub.CatalogKey, "")
		if err != nil {
			b.Fatal(err)
		}
		if err := bk.Delete(context.Background(), "index/"+indexpub.CatalogKey); err != nil {
			b.Fatal(err)
		}
		defer func() {
			if _, err := bk.Put(context.Background(), "index/"+indexpub.CatalogKey, saved, indexpub.Cond{}); err != nil {
				b.Fatal(err)
			}
		}()
	}
	var sum ColdStart
	var first, raw time.Duration
	var rawBytes int64
	var heap float64
	var s3Gets int64
	b.StopTimer()
	for range b.N {
		rd, rn := rawGet(b, e.s3.Client)
		raw += rd
		rawBytes = rn
		before := heapMB()
		cfg := e.config(b)
		cfg.DynamoDB, cfg.S3 = nil, nil // built from the endpoints, as in a real cold start
		cfg.DynamoDBEndpoint, cfg.S3Endpoint = testDynamoEndpoint(b), e.s3.URL
		gets0 := e.s3.Gets.Load()
		// TOOLRAG_BENCH_CPUPROFILE: a CPU profile of the cold start alone
		// (not of the seeding, nor of the raw GETs before it).
		stopProfile := startCPUProfile(b, os.Getenv("TOOLRAG_BENCH_CPUPROFILE"), d.published+"-"+source)
		b.StartTimer()
		g, err := NewGatewayFunction(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		h := lambdahttp.Dispatch(g, lambdahttp.Options{})
		t0 := time.Now()
		sid := initialize(b, h, "http-api-initialize.json", benchSecret)
		f, _ := findTools(b, h, benchSecret, sid, "create an invoice for a customer")
		first += time.Since(t0)
		b.StopTimer()
		stopProfile()
		s3Gets += e.s3.Gets.Load() - gets0
		if f.FallbackUsed || len(f.Results) == 0 || g.CatalogSource() != source {
			b.Fatalf("first find_tools: %+v (catalog from %s)", f, g.CatalogSource())
		}
		heap += heapMB() - before
		if path := os.Getenv("TOOLRAG_BENCH_HEAPPROFILE"); path != "" {
			writeHeapProfile(b, path+"-"+d.published+"-"+source)
		}
		cs := g.ColdStart()
		sum.Init += cs.Init
		sum.IndexFetch += cs.IndexFetch
		sum.IndexParse += cs.IndexParse
		sum.Catalog += cs.Catalog
		sum.Keywords += cs.Keywords
		sum.Surface += cs.Surface
		sum.Total += cs.Total
		sum.IndexBytes = cs.IndexBytes
		g.Close()
	}
	n := float64(b.N)
	b.ReportMetric(ms(sum.Init)/n, "init-ms")
	b.ReportMetric(ms(sum.IndexFetch)/n, "s3fetch-ms")
	b.ReportMetric(ms(sum.IndexParse)/n, "parse-ms")
	b.ReportMetric(ms(sum.Catalog)/n, "catalog-ms")
	b.ReportMetric(ms(sum.Keywords)/n, "keywords-ms")
	b.ReportMetric(ms(sum.Surface)/n, "surface-ms")
	b.ReportMetric(ms(sum.Total)/n, "newgateway-ms")
	b.ReportMetric(ms(first)/n, "first-find-ms")
	b.ReportMetric(ms(raw)/n, "rawget-ms")
	b.ReportMetric(float64(sum.IndexFetch+sum.IndexParse)/float64(raw), "load/rawget")
	b.ReportMetric(float64(e.emb.Dim()), "dim")
	b.ReportMetric(float64(rawBytes)/(1<<20), "index-MB")
	b.ReportMetric(heap/n, "heap-MB")
	b.ReportMetric(float64(s3Gets)/n, "s3-gets")
	ix := d.indexes[d.published]
	b.ReportMetric(float64(ix.EncodedSize())/float64(ix.Len()), "index-B/tool")
	if sum.IndexBytes != rawBytes {
		b.Logf("the load read %d bytes, the raw GETs %d", sum.IndexBytes, rawBytes)
	}
}

func testDynamoEndpoint(b *testing.B) string { return testenv.DynamoDB(b) }

// latencies reports p50 and p99 of ds.
func latencies(b *testing.B, ds []time.Duration) {
	slices.Sort(ds)
	at := func(q float64) time.Duration { return ds[min(len(ds)-1, int(q*float64(len(ds))))] }
	b.ReportMetric(ms(at(0.50)), "p50-ms")
	b.ReportMetric(ms(at(0.99)), "p99-ms")
}

var warmQueries = []string{
	"create an invoice for a customer", "list open pull requests", "send a message to a channel",
	"search tickets about login errors", "export the sales report", "schedule a calendar event",
	"delete an archived document", "approve a deployment", "reverse the characters of a text",
	"add two numbers", "close an incident", "translate a document",
}

func findBody(i int) string {
	return findToolsBody(3, warmQueries[i%len(warmQueries)], "")
}

const runBody = `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo__reverse","arguments":{"text":"hello"}}}}`

// BenchmarkWarmLambda: warm find_tools and run_tool through the Lambda
// handler (HTTP API events → Dispatch → gateway; sessions in DynamoDB).
func BenchmarkWarmLambda(b *testing.B) {
	d := benchDeploy(b, benchTools())
	for _, enc := range benchIndexes() {
		b.Run("index="+enc, func(b *testing.B) {
			d.use(b, enc)
			warmLambda(b, d)
		})
	}
}

func warmLambda(b *testing.B, d *benchDeployment) {
	g, err := NewGatewayFunction(context.Background(), d.env.config(b))
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	sid := initialize(b, h, "http-api-initialize.json", benchSecret)
	finds := make([]json.RawMessage, len(warmQueries))
	for i := range finds {
		finds[i] = event(b, "http-api-find-tools.json", request{auth: benchSecret, session: sid, body: findBody(i)})
	}
	run := event(b, "http-api-run-tool.json", request{auth: benchSecret, session: sid, body: runBody})
	ctx := context.Background()
	for _, op := range []struct {
		name string
		raw  func(i int) json.RawMessage
	}{
		{"find_tools", func(i int) json.RawMessage { return finds[i%len(finds)] }},
		{"run_tool", func(int) json.RawMessage { return run }},
	} {
		b.Run(op.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for i := range b.N {
				t0 := time.Now()
				out, err := h(ctx, op.raw(i))
				ds = append(ds, time.Since(t0))
				if err != nil {
					b.Fatal(err)
				}
				if i == 0 {
					if r := invokeResult(b, out); r.status != 200 {
						b.Fatalf("%s: %d %s", op.name, r.status, r.body)
					}
				}
			}
			latencies(b, ds)
		})
	}
}

func invokeResult(b *testing.B, out any) response {
	return invoke(b, func(context.Context, json.RawMessage) (any, error) { return out, nil }, nil)
}

// BenchmarkWarmLocal: the same calls against the local runtime (pkg/local:
// SQLite, in-memory sessions) over HTTP on loopback, with the same catalog
// and the same echo server.
func BenchmarkWarmLocal(b *testing.B) {
	d := benchDeploy(b, benchTools())
	// The synthetic servers are registry servers too (keys.yaml may only
	// grant those, config.CheckKeyGrants): each points at the echo server
	// for the first sync, then gets its synthetic tools written into the
	// store (no further sync runs).
	var reg, grants strings.Builder
	reg.WriteString("servers:\n")
	grants.WriteString("echo: {}")
	for _, srv := range append([]string{"echo"}, slices.Sorted(maps.Keys(syntheticTools(d.n)))...) {
		fmt.Fprintf(&reg, "  %s:\n    transport: streamable_http\n    url: %s\n", srv, d.echoURL)
		if srv != "echo" {
			fmt.Fprintf(&grants, ", %s: {}", srv)
		}
	}
	gw := localtest.Start(b, localtest.Options{
		Registry: reg.String(),
		Keys:     fmt.Sprintf("keys:\n  - id: dev\n    secret: %q\n    servers: {%s}\n", devSecret, grants.String()),
		Embedder: d.env.emb,
		Sync:     indexer.ModeOff,
	})
	lg, ctx := gw.Runtime, context.Background()
	for srv, tools := range syntheticTools(d.n) {
		if _, _, err := lg.Store.ReplaceServerTools(ctx, catalog.Server{ID: srv, Title: srv, Status: catalog.StatusActive}, tools); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := lg.Reindex(ctx, indexer.ModeFull); err != nil {
		b.Fatal(err)
	}
	if err := lg.MCP.Reload(ctx); err != nil {
		b.Fatal(err)
	}
	client := gw.Server.Client()
	post := func(sid, body string) (*http.Response, []byte) {
		req, _ := http.NewRequest("POST", gw.URL, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+devSecret)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		}
		resp, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, data
	}
	init := loadEvent(b, "http-api-initialize.json")["body"].(string)
	resp, _ := post("", init)
	sid := resp.Header.Get("Mcp-Session-Id")
	if sid == "" {
		b.Fatal("local initialize returned no session")
	}
	for _, op := range []struct {
		name string
		body func(i int) string
	}{
		{"find_tools", findBody},
		{"run_tool", func(int) string { return runBody }},
	} {
		b.Run(op.name, func(b *testing.B) {
			ds := make([]time.Duration, 0, b.N)
			for i := range b.N {
				t0 := time.Now()
				resp, data := post(sid, op.body(i))
				ds = append(ds, time.Since(t0))
				if resp.StatusCode != 200 || !bytes.Contains(data, []byte(`"result"`)) || bytes.Contains(data, []byte(`"isError":true`)) {
					b.Fatalf("%s: %d %s", op.name, resp.StatusCode, data)
				}
			}
			latencies(b, ds)
		})
	}
}

var (
	gatewayBinOnce sync.Once
	gatewayBin     string
	gatewayBinErr  error
)
