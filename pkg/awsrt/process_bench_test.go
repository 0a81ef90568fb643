package awsrt

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// buildGatewayFunction builds functions/gateway as the Lambda would run it
// (lambda.norpc, -s -w), for the host architecture.
func buildGatewayFunction(b *testing.B) string {
	gatewayBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "toolrag-gw")
		if err != nil {
			gatewayBinErr = err
			return
		}
		gatewayBin = filepath.Join(dir, "bootstrap")
		cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", gatewayBin, "./functions/gateway")
		cmd.Dir = testenv.Root(b)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			gatewayBinErr = fmt.Errorf("build functions/gateway: %v\n%s", err, out)
		}
	})
	if gatewayBinErr != nil {
		b.Fatal(gatewayBinErr)
	}
	return gatewayBin
}

// runtimeAPI is a Lambda Runtime API endpoint (the interface the Lambda
// service offers a provided.al2023 bootstrap): it hands out the events
// next() returns and collects the responses.
type runtimeAPI struct {
	srv       *httptest.Server
	next      chan []byte // events to hand out
	responses chan []byte
	errs      chan string
	polled    chan time.Time // time of the first GET .../invocation/next (end of init)
}

func newRuntimeAPI() *runtimeAPI {
	r := &runtimeAPI{next: make(chan []byte, 4), responses: make(chan []byte, 4), errs: make(chan string, 4), polled: make(chan time.Time, 1)}
	var n atomic.Int64
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.Method == http.MethodGet && req.URL.Path == "/2018-06-01/runtime/invocation/next":
			select { // the first poll ends the init phase
			case r.polled <- time.Now():
			default:
			}
			select {
			case ev := <-r.next:
				id := fmt.Sprintf("req-%d", n.Add(1))
				w.Header().Set("Lambda-Runtime-Aws-Request-Id", id)
				w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(29*time.Second).UnixMilli(), 10))
				w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:toolrag-gateway")
				_, _ = w.Write(ev)
			case <-req.Context().Done():
			}
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/response"):
			body, _ := io.ReadAll(req.Body)
			w.WriteHeader(http.StatusAccepted)
			r.responses <- body
		case req.Method == http.MethodPost:
			body, _ := io.ReadAll(req.Body)
			w.WriteHeader(http.StatusAccepted)
			r.errs <- req.URL.Path + ": " + string(body)
		default:
			http.NotFound(w, req)
		}
	}))
	return r
}

// await returns the next response; on failure it reports what diag returns
// (the function's stderr, read once the process is stopped).
func (r *runtimeAPI) await(b *testing.B, diag func() string) events.APIGatewayV2HTTPResponse {
	select {
	case body := <-r.responses:
		var resp events.APIGatewayV2HTTPResponse
		if err := json.Unmarshal(body, &resp); err != nil {
			b.Fatalf("response %q: %v", body, err)
		}
		return resp
	case e := <-r.errs:
		b.Fatalf("function error: %s\n%s", e, diag())
	case <-time.After(120 * time.Second):
		b.Fatalf("no response from the function within 120s; its stderr:\n%s", diag())
	}
	return events.APIGatewayV2HTTPResponse{}
}

// BenchmarkProcessColdStart starts the real functions/gateway binary under
// a Lambda Runtime API, as an on-demand init, and measures the init phase
// (process start → first poll for an invocation) and process start → first
// find_tools answered (initialize, then find_tools on the session). The
// sub-benchmarks are the default init wait (8 s) and TOOL_RAG_INIT_WAIT=0
// (the whole load inside the init phase, as before the init wait).
func BenchmarkProcessColdStart(b *testing.B) {
	d := benchDeploy(b, benchTools())
	bins := []struct{ name, path string }{{"new", buildGatewayFunction(b)}}
	// TOOLRAG_BENCH_GATEWAY_BASE: another build of functions/gateway (e.g.
	// of the previous commit), started alternately with this one against
	// the same deployment: an A/B in one run on a noisy machine.
	if base := os.Getenv("TOOLRAG_BENCH_GATEWAY_BASE"); base != "" {
		bins = append([]struct{ name, path string }{{"base", base}}, bins...)
	}
	for _, enc := range benchIndexes() {
		b.Run("index="+enc, func(b *testing.B) {
			d.use(b, enc)
			for _, bin := range bins {
				name := ""
				if len(bins) > 1 {
					name = "bin=" + bin.name + "/"
				}
				// TOOLRAG_BENCH_BASE_JSON_COPY=1: the base build is from
				// before the binary catalog copy and reads the JSON one.
				if len(bins) > 1 && os.Getenv("TOOLRAG_BENCH_BASE_JSON_COPY") != "" {
					d.copyEncoding(b, map[bool]string{true: "json", false: "binary"}[bin.name == "base"])
				}
				// One start first, not counted: the first read of the
				// seeded state from the emulators is slower than every
				// later one.
				b.Run(name+"warm-up", func(b *testing.B) { processColdStart(b, d, bin.path, "0", "") })
				for _, wait := range benchInitWaits() {
					// TOOLRAG_BENCH_FUNCTION_GOGC: GC tuning of the function,
					// e.g. 400, or a list (50,100) measured in turn.
					gogcs := strings.Split(os.Getenv("TOOLRAG_BENCH_FUNCTION_GOGC"), ",")
					for _, gogc := range gogcs {
						sub := name + "init-wait=" + wait
						if len(gogcs) > 1 {
							sub += "/gogc=" + gogc
						}
						b.Run(sub, func(b *testing.B) { processColdStart(b, d, bin.path, wait, gogc) })
					}
				}
				// A warm function that picks up a new index and catalog
				// copy inside a request: its peak, not the cold start's,
				// sizes the function.
				if os.Getenv("TOOLRAG_BENCH_REFRESH") != "0" {
					b.Run(name+"then-refresh", func(b *testing.B) { processColdStart(b, d, bin.path, "refresh", "") })
				}
			}
		})
	}
}

// copyEncoding stores the deployment's catalog copy as JSON (as written
// before the binary encoding) or as written now ("binary").
func (d *benchDeployment) copyEncoding(b *testing.B, enc string) {
	ctx := context.Background()
	bucket := s3bucket.New(d.env.s3.Client, testBucket)
	key := "index/" + indexpub.CatalogKey
	if d.binaryCopy == nil {
		body, _, err := bucket.Get(ctx, key, "")
		if err != nil {
			b.Fatal(err)
		}
		d.binaryCopy = body
	}
	body := d.binaryCopy
	if enc == "json" {
		ptr, err := indexpub.ReadPointer(ctx, bucket, "index/")
		if err != nil {
			b.Fatal(err)
		}
		c, _, ok, err := indexpub.ReadCatalog(ctx, bucket, "index/", ptr.SHA256, "")
		if !ok {
			b.Fatalf("catalog copy: %v", err)
		}
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
		if err := json.NewEncoder(zw).Encode(c); err != nil {
			b.Fatal(err)
		}
		zw.Close()
		body = buf.Bytes()
	}
	if _, err := bucket.Put(ctx, key, body, indexpub.Cond{}); err != nil {
		b.Fatal(err)
	}
}

// benchInitWaits are the init waits of BenchmarkProcessColdStart:
// TOOLRAG_BENCH_INIT_WAITS (comma-separated, e.g. "0"), default the
// default wait and 0.
func benchInitWaits() []string {
	if v := os.Getenv("TOOLRAG_BENCH_INIT_WAITS"); v != "" {
		return strings.Split(v, ",")
	}
	return []string{"default", "0"}
}

// republish publishes another build of the deployment's index (one vector
// changed, so the hash differs) with a fresh catalog copy, as a sync would.
func republish(b *testing.B, d *benchDeployment) {
	ctx := context.Background()
	cur, meta := d.indexes[d.published], d.meta
	if cur == nil { // a variant is current: the previous republish's
		cur = d.variant
	}
	r, _ := cur.EncodedReader()
	raw, err := io.ReadAll(r)
	if err != nil {
		b.Fatal(err)
	}
	next, err := vindex.DecodeInPlace(raw)
	if err != nil {
		b.Fatal(err)
	}
	d.republished++
	id := next.IDs()[d.republished%next.Len()]
	v, _ := next.Vector(id)
	v[0], v[1] = v[1], v[0]
	if err := next.Upsert(id, v); err != nil {
		b.Fatal(err)
	}
	bucket := s3bucket.New(d.env.s3.Client, testBucket)
	ptr, err := indexpub.ReadPointer(ctx, bucket, "index/")
	if err != nil {
		b.Fatal(err)
	}
	cp, _, ok, err := indexpub.ReadCatalog(ctx, bucket, "index/", ptr.SHA256, "")
	if !ok {
		b.Fatalf("catalog copy: %v", err)
	}
	pub := indexpub.NewPublisher(bucket, "index/")
	pub.BeforeSwitch = func(ctx context.Context, ptr indexpub.Pointer) error {
		return indexpub.WriteCatalog(ctx, bucket, "index/", ptr.SHA256, cp.Tools, cp.Servers, nil)
	}
	meta.BuiltAt, meta.IndexSHA256 = time.Time{}, ""
	if _, err := pub.Publish(ctx, next, meta); err != nil {
		b.Fatal(err)
	}
	d.published, d.variant = "", next // a variant: use publishes the original again
	d.binaryCopy = nil
}

// vmHWM returns the peak resident set size of process pid (what Lambda's
// memory limit applies to), in bytes.
func vmHWM(b *testing.B, pid int) int64 {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			if err != nil {
				b.Fatalf("VmHWM %q: %v", v, err)
			}
			return kb << 10
		}
	}
	b.Fatalf("no VmHWM in /proc/%d/status", pid)
	return 0
}

// processColdStart measures cold starts with the init wait initWait
// ("default", or seconds), or with "refresh": a cold start with the
// default wait, then a new publish and the request that loads it.
func processColdStart(b *testing.B, d *benchDeployment, bin, initWait, gogc string) {
	refresh := initWait == "refresh"
	var coldPeak int64
	var refreshReq time.Duration
	st, err := os.Stat(bin)
	if err != nil {
		b.Fatal(err)
	}
	e := d.env
	var initPhase, toInit, toFind, cpu time.Duration
	var faults int64 // minor page faults: first touches of memory
	var peakRSS, coldGets int64
	b.StopTimer()
	for range b.N {
		api := newRuntimeAPI()
		api.next <- event(b, "http-api-initialize.json", request{auth: benchSecret})
		cmd := exec.Command(bin)
		cmd.Env = []string{
			"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
			"AWS_LAMBDA_RUNTIME_API=" + strings.TrimPrefix(api.srv.URL, "http://"),
			"AWS_REGION=us-east-1",
			"TOOL_RAG_TOOLS_TABLE=" + e.tables.Tools, "TOOL_RAG_KEYS_TABLE=" + e.tables.Keys,
			"TOOL_RAG_REGISTRY_TABLE=" + e.tables.Registry, "TOOL_RAG_SESSIONS_TABLE=" + e.tables.Sessions,
			"TOOL_RAG_INDEX_BUCKET=" + testBucket, "TOOL_RAG_INDEX_PREFIX=index/",
			"TOOL_RAG_DYNAMODB_ENDPOINT=" + testenv.DynamoDB(b), "TOOL_RAG_S3_ENDPOINT=" + e.s3.URL,
			"TOOLRAG_LOG_LEVEL=warn",
			// As Lambda sets it for a function without provisioned
			// concurrency: the init phase is limited to 10 s.
			"AWS_LAMBDA_INITIALIZATION_TYPE=on-demand",
		}
		switch initWait {
		case "default":
		case "refresh":
			// The whole load inside the init phase: on a busy machine a
			// 100k load outlasts the default wait, and the first
			// request would get "still loading".
			cmd.Env = append(cmd.Env, "TOOL_RAG_INDEX_REFRESH=0.5", "TOOL_RAG_INIT_WAIT=0")
		default:
			cmd.Env = append(cmd.Env, "TOOL_RAG_INIT_WAIT="+initWait)
		}
		// The function's memory size as Lambda sets it (the runtime's soft
		// memory limit is 90% of it), e.g. TOOLRAG_BENCH_FUNCTION_MEMORY=2048.
		if v := os.Getenv("TOOLRAG_BENCH_FUNCTION_MEMORY"); v != "" {
			cmd.Env = append(cmd.Env, "AWS_LAMBDA_FUNCTION_MEMORY_SIZE="+v)
		}
		if gogc != "" {
			cmd.Env = append(cmd.Env, "GOGC="+gogc)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		diag := func() string {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
			return stderr.String()
		}
		gets0 := e.s3.Gets.Load()
		b.StartTimer()
		t0 := time.Now()
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		r := api.await(b, diag)
		toInit += time.Since(t0)
		initPhase += (<-api.polled).Sub(t0)
		sid := r.Headers["Mcp-Session-Id"]
		api.next <- event(b, "http-api-find-tools.json", request{auth: benchSecret, session: sid, body: findToolsBody(3, "create an invoice for a customer", "")})
		r = api.await(b, diag)
		toFind += time.Since(t0)
		b.StopTimer()
		coldGets += e.s3.Gets.Load() - gets0
		text, _ := testenv.ResultText(b, result(b, response{r.StatusCode, r.Headers, r.Body}, 3))
		if !strings.Contains(text, `"fallback_used":false`) {
			b.Fatalf("find_tools: %s\n%s", text, diag())
		}
		peakRSS = max(peakRSS, vmHWM(b, cmd.Process.Pid))
		if refresh {
			coldPeak = peakRSS
			republish(b, d)
			time.Sleep(600 * time.Millisecond) // past TOOL_RAG_INDEX_REFRESH
			t1 := time.Now()
			api.next <- event(b, "http-api-find-tools.json", request{auth: benchSecret, session: sid, body: findToolsBody(4, "create an invoice for a customer", "")})
			r = api.await(b, diag)
			refreshReq += time.Since(t1)
			if text, _ := testenv.ResultText(b, result(b, response{r.StatusCode, r.Headers, r.Body}, 4)); !strings.Contains(text, `"fallback_used":false`) {
				b.Fatalf("find_tools after the publish: %s\n%s", text, diag())
			}
			peakRSS = max(peakRSS, vmHWM(b, cmd.Process.Pid))
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			cpu += time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
			faults += ru.Minflt
		}
		api.srv.Close()
	}
	// CPU time (user+system) of the function process, start to kill: unlike
	// the wall times it does not grow when other processes take the cores.
	b.ReportMetric(ms(cpu)/float64(b.N), "cpu-ms")
	b.ReportMetric(float64(faults)/float64(b.N), "page-faults")
	b.ReportMetric(ms(initPhase)/float64(b.N), "init-phase-ms")
	b.ReportMetric(float64(peakRSS)/(1<<20), "peak-rss-MB")
	if refresh {
		b.ReportMetric(float64(coldPeak)/(1<<20), "cold-peak-rss-MB")
		b.ReportMetric(ms(refreshReq)/float64(b.N), "refresh-request-ms")
	}
	b.ReportMetric(ms(toInit)/float64(b.N), "to-initialize-ms")
	b.ReportMetric(ms(toFind)/float64(b.N), "to-first-find-ms")
	b.ReportMetric(float64(coldGets)/float64(b.N), "cold-s3-gets")
	b.ReportMetric(float64(st.Size())/(1<<20), "binary-MB")
}
