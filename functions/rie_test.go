// Package functions_test runs the three Lambda functions as AWS runs them:
// each bootstrap binary under the AWS Lambda Runtime Interface Emulator
// (aws-lambda-rie, installed by scripts/deps.sh from the Go module proxy),
// invoked with the events/ samples as they are, against DynamoDB Local and
// an S3 fake (gofakes3) through the real AWS SDK. It covers the Lambda
// runtime path (aws-lambda-go's runtime API client, the event decoding,
// the response encoding and its limits), not only the handler functions.
package functions_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket/s3test"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const bucket = "toolrag-rie-index"

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// emulated returns the emulator's path and the functions' bootstrap
// binaries (name → path), built for the host architecture; without the
// emulator the test is skipped (or fails, where tools are required).
func emulated(t *testing.T, functions ...string) (rie string, bins map[string]string) {
	t.Helper()
	rie = filepath.Join(testenv.ToolsDir(t), "bin", "aws-lambda-rie")
	if _, err := os.Stat(rie); err != nil {
		testenv.Missing(t, "aws-lambda-rie")
	}
	bins = map[string]string{}
	for _, name := range functions {
		bins[name] = testenv.GoBinary(t, "./functions/"+name)
	}
	return rie, bins
}

// startProcess starts cmd with its output kept (the tail of it is logged
// when the test fails) and stops it when the test ends.
func startProcess(t *testing.T, name string, cmd *exec.Cmd) *testenv.Buffer {
	t.Helper()
	logs := &testenv.Buffer{Max: 1 << 20}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_, _ = cmd.Process.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, logs.String())
		}
	})
	return logs
}

// function is one function running under aws-lambda-rie.
type function struct {
	name string
	url  string // the emulator's invoke URL
	logs *testenv.Buffer
}

// startFunction runs bootstrap under the emulator with env (plus what
// Lambda sets) and waits until it accepts invokes.
func startFunction(t *testing.T, rie, name, bootstrap string, timeout int, env map[string]string) *function {
	t.Helper()
	addr, apiAddr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(rie, "--runtime-interface-emulator-address", addr, "--runtime-api-address", apiAddr, bootstrap)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"AWS_LAMBDA_FUNCTION_NAME=" + name, fmt.Sprintf("AWS_LAMBDA_FUNCTION_TIMEOUT=%d", timeout),
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local", "LOG_LEVEL=error",
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := startProcess(t, name, cmd)
	f := &function{name: name, url: "http://" + addr + "/2015-03-31/functions/function/invocations", logs: logs}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			return f
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: the emulator did not listen on %s: %s", name, addr, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// logLine waits up to 10 s for a line of the function's output matching
// re and returns the match: the emulator forwards what the function writes
// on its own schedule, so a line may arrive after the invoke's answer. (On
// a failure startProcess logs the whole output.)
func (f *function) logLine(t *testing.T, re *regexp.Regexp) []string {
	t.Helper()
	var m []string
	testenv.Eventually(t, 10*time.Second, fmt.Sprintf("a line matching %s in the output of %s", re, f.name), func() bool {
		m = re.FindStringSubmatch(f.logs.String())
		return m != nil
	})
	return m
}

// invoke sends payload as a synchronous invoke and returns the function's
// JSON result (an error result fails the test).
func (f *function) invoke(t *testing.T, payload []byte) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	body, err := testenv.RIEInvoker(f.url)(ctx, payload)
	if err != nil {
		t.Fatalf("%s: invoke: %v", f.name, err)
	}
	return body
}

func sample(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.Root(t), "events", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// withBody returns an HTTP API sample with another body and session.
func withBody(t *testing.T, name, sid, body string) []byte {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(sample(t, name), &ev); err != nil {
		t.Fatal(err)
	}
	h := ev["headers"].(map[string]any)
	delete(h, "content-length")
	if sid != "" {
		h["mcp-session-id"] = sid
	}
	ev["body"] = body
	// As API Gateway sends it: '<' stays one byte (a request payload is
	// limited to 6 MB too).
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(ev); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// httpResponse is an HTTP API / REST API / buffered Function URL result.
type httpResponse struct {
	StatusCode        int                 `json:"statusCode"`
	Headers           map[string]string   `json:"headers"`
	MultiValueHeaders map[string][]string `json:"multiValueHeaders"`
	Body              string              `json:"body"`
}

func (r httpResponse) header(k string) string {
	for hk, v := range r.Headers {
		if strings.EqualFold(hk, k) {
			return v
		}
	}
	for hk, v := range r.MultiValueHeaders {
		if strings.EqualFold(hk, k) && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

func decodeHTTP(t *testing.T, raw []byte) httpResponse {
	t.Helper()
	// A Function URL in RESPONSE_STREAM mode: a JSON prelude, 8 NUL
	// bytes, the body.
	if prelude, body, ok := bytes.Cut(raw, make([]byte, 8)); ok {
		var r httpResponse
		if err := json.Unmarshal(prelude, &r); err != nil {
			t.Fatalf("stream prelude %.300s: %v", prelude, err)
		}
		r.Body = string(body)
		return r
	}
	var r httpResponse
	if err := json.Unmarshal(raw, &r); err != nil {
		t.Fatalf("result %.300s: %v", raw, err)
	}
	return r
}

// rpcResult returns the result of JSON-RPC request id in a JSON or SSE
// body.
func rpcResult(t *testing.T, r httpResponse, id int) json.RawMessage {
	t.Helper()
	var msgs []string
	if strings.HasPrefix(r.header("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(strings.NewReader(r.Body))
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				msgs = append(msgs, d)
			}
		}
	} else {
		msgs = []string{r.Body}
	}
	for _, m := range msgs {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Result json.RawMessage `json:"result"`
			Error  json.RawMessage `json:"error"`
		}
		if json.Unmarshal([]byte(m), &msg) == nil && string(msg.ID) == fmt.Sprint(id) {
			if msg.Error != nil {
				t.Fatalf("request %d: JSON-RPC error %s", id, msg.Error)
			}
			return msg.Result
		}
	}
	t.Fatalf("no answer to request %d: status %d body %.500q", id, r.StatusCode, r.Body)
	return nil
}

func TestFunctionsUnderRIE(t *testing.T) {
	rie, bins := emulated(t, "gateway", "sync", "health")

	d := newDeployment(t)
	env := d.env
	// sync: the scheduled event → tools table, index and catalog copy in S3.
	syncFn := startFunction(t, rie, "toolrag-sync", bins["sync"], 900, env)
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sync.Synced != 1 || rep.Index.Tools == 0 || rep.IndexErr != "" || rep.Trigger != "Scheduled Event" {
		t.Fatalf("sync report: %+v", rep)
	}
	if !strings.Contains(syncFn.logs.String(), `"sync_successes_total":1`) {
		t.Errorf("the sync function wrote no EMF line with sync_successes_total: %.1000s", syncFn.logs.String())
	}

	// health: the scheduled event → the registry's health column.
	healthFn := startFunction(t, rie, "toolrag-health", bins["health"], 60, env)
	var hrep awsrt.HealthReport
	if err := json.Unmarshal(healthFn.invoke(t, sample(t, "schedule-health.json")), &hrep); err != nil {
		t.Fatal(err)
	}
	if len(hrep.Up) != 1 || hrep.Up[0] != "echo" {
		t.Fatalf("health report: %+v", hrep)
	}

	// gateway: cold start, then every sample as it is.
	gw := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, env)
	r := decodeHTTP(t, gw.invoke(t, sample(t, "http-api-health.json")))
	if r.StatusCode != 200 || !strings.Contains(r.Body, `"status":"ok"`) {
		t.Fatalf("GET /health: %d %s", r.StatusCode, r.Body)
	}
	r = decodeHTTP(t, gw.invoke(t, sample(t, "http-api-initialize.json")))
	sid := r.header("Mcp-Session-Id")
	if r.StatusCode != 200 || sid == "" {
		t.Fatalf("initialize: %d session %q %s", r.StatusCode, sid, r.Body)
	}
	rpcResult(t, r, 1)
	for _, name := range []string{"rest-api-initialize.json", "function-url-initialize.json"} {
		r := decodeHTTP(t, gw.invoke(t, sample(t, name)))
		if r.StatusCode != 200 || r.header("Mcp-Session-Id") == "" {
			t.Fatalf("%s: %d %s", name, r.StatusCode, r.Body)
		}
		rpcResult(t, r, 1)
	}

	// The session samples, as they are (the fixture session).
	r = decodeHTTP(t, gw.invoke(t, sample(t, "http-api-tools-list.json")))
	if res := string(rpcResult(t, r, 2)); !strings.Contains(res, "find_tools") {
		t.Fatalf("tools/list: %s", res)
	}
	r = decodeHTTP(t, gw.invoke(t, sample(t, "http-api-find-tools.json")))
	text, isErr := testenv.ResultText(t, rpcResult(t, r, 3))
	if isErr || !strings.Contains(text, "echo__") || strings.Contains(text, `"fallback_used":true`) {
		t.Fatalf("find_tools: error=%v %s", isErr, text)
	}
	r = decodeHTTP(t, gw.invoke(t, sample(t, "http-api-run-tool.json")))
	if text, isErr := testenv.ResultText(t, rpcResult(t, r, 4)); isErr || text != "hello from sam local" {
		t.Fatalf("run_tool: error=%v %q", isErr, text)
	}

	// The session started above continues on another instance (one with
	// the default 8 MiB result limit, for the payload check below).
	env2 := map[string]string{}
	for k, v := range env {
		if k != "MCP_GATEWAY_MAX_RESULT_BYTES" {
			env2[k] = v
		}
	}
	gw2 := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, env2)
	r = decodeHTTP(t, gw2.invoke(t, withBody(t, "http-api-run-tool.json", sid,
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo__reverse","arguments":{"text":"abc"}}}}`)))
	if text, isErr := testenv.ResultText(t, rpcResult(t, r, 7)); isErr || text != "cba" {
		t.Fatalf("run_tool on a second instance with the first one's session: error=%v %q", isErr, text)
	}

	// The REST API through the same function.
	var ev map[string]any
	_ = json.Unmarshal(withBody(t, "http-api-find-tools.json", "", `{"query":"reverse the characters of a text"}`), &ev)
	ev["rawPath"] = "/tool-rag/retrieve"
	ev["requestContext"].(map[string]any)["http"].(map[string]any)["path"] = "/tool-rag/retrieve"
	raw, _ := json.Marshal(ev)
	r = decodeHTTP(t, gw.invoke(t, raw))
	if r.StatusCode != 200 || !strings.Contains(r.Body, `"tool_id":"echo__reverse"`) {
		t.Fatalf("POST /tool-rag/retrieve: %d %.500s", r.StatusCode, r.Body)
	}

	// Lambda's payload limit, on the real runtime path. A 1.2 MB text of
	// '<' is 7.2 MB as the upstream's JSON (\u003c) and would be 8.4 MB as
	// the Lambda payload: over MCP_GATEWAY_MAX_RESULT_BYTES (the stacks'
	// 2 MiB, or the Lambda cap of the default) it is stored in S3 and
	// answered as a preview and a resource_link, and the instance lives on.
	big := strings.Repeat("<", 1_200_000)
	bigCall := withBody(t, "http-api-run-tool.json", sid,
		fmt.Sprintf(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo__echo","arguments":{"text":%q}}}}`, big))
	for _, f := range []*function{gw, gw2} {
		out := f.invoke(t, bigCall)
		if len(out) > 1<<20 {
			t.Fatalf("payload of %d bytes for a result that should be linked", len(out))
		}
		res := rpcResult(t, decodeHTTP(t, out), 8)
		if text, isErr := testenv.ResultText(t, res); isErr || !strings.Contains(string(res), `"type":"resource_link"`) || !strings.Contains(text, "gateway://_results/") {
			t.Fatalf("oversized result: error=%v %.300q", isErr, res)
		}
	}
	r = decodeHTTP(t, gw2.invoke(t, sample(t, "http-api-run-tool.json")))
	if text, _ := testenv.ResultText(t, rpcResult(t, r, 4)); text != "hello from sam local" {
		t.Fatalf("after the oversized result: %q", text)
	}
	if !strings.Contains(gw.logs.String(), `"CloudWatchMetrics"`) {
		t.Error("the gateway wrote no EMF line")
	}
}

// deployment is one deployment's data: tables in DynamoDB Local, the index
// bucket in the S3 fake, the echo server as the one upstream, and the
// functions' environment.
type deployment struct {
	ddb    *dynamodb.Client
	ddbURL string
	tables dynamo.Tables
	env    map[string]string
	s3     *s3test.Server // counts its GETs and PUTs
}

func newDeployment(t *testing.T) *deployment {
	t.Helper()
	ctx := context.Background()
	ddbURL := testenv.DynamoDB(t)
	ddb, err := dynamo.NewClient(ctx, ddbURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := testenv.UniqueName(t, "rie-")
	tables := dynamo.Tables{Tools: p + "-tools", Keys: p + "-keys", Registry: p + "-registry", Sessions: p + "-sessions"}
	if err := dynamo.CreateTables(ctx, ddb, tables); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, n := range []string{tables.Tools, tables.Keys, tables.Registry, tables.Sessions} {
			_, _ = ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(n)})
		}
	})
	s3 := s3test.New(t, bucket)
	reg := dynamo.NewRegistryStore(ddb, tables.Registry)
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: testenv.StartEcho(t)})
	if err != nil {
		t.Fatal(err)
	}
	if err := reg.PutServer(ctx, "echo", doc); err != nil {
		t.Fatal(err)
	}
	// What `toolrag dynamo seed-events` does: the example key and the
	// fixture session of the samples.
	if _, err := dynamo.SeedEventFixtures(ctx, dynamo.NewKeyStore(ddb, tables.Keys), reg, dynamo.NewSessionStore(ddb, tables.Sessions), nil); err != nil {
		t.Fatal(err)
	}

	env := map[string]string{
		"TOOL_RAG_TOOLS_TABLE": tables.Tools, "TOOL_RAG_KEYS_TABLE": tables.Keys,
		"TOOL_RAG_REGISTRY_TABLE": tables.Registry, "TOOL_RAG_SESSIONS_TABLE": tables.Sessions,
		"TOOL_RAG_INDEX_BUCKET": bucket, "TOOL_RAG_INDEX_PREFIX": "index/",
		"TOOL_RAG_DYNAMODB_ENDPOINT": ddbURL, "TOOL_RAG_S3_ENDPOINT": s3.URL,
		"TOOL_RAG_EMBEDDER": "builtin", "TOOL_RAG_RERANKER": "off", "MCP_GATEWAY_MCP_PATH": "/mcp",
		"TOOL_RAG_METRICS_NAMESPACE": "ToolRAG", "TOOL_RAG_METRICS_INTERVAL": "0.001",
		// What the stacks set (infra/operations.go).
		"MCP_GATEWAY_UPSTREAM_TIMEOUT": "25", "MCP_GATEWAY_MAX_RESULT_BYTES": "2097152",
	}

	return &deployment{ddb: ddb, ddbURL: ddbURL, tables: tables, env: env, s3: s3}
}
