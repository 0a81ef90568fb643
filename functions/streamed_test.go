package functions_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// TestLongCallsStreamedProgress runs the real gateway binary as the
// streamed front door's function (a Function URL in RESPONSE_STREAM mode)
// and checks that an upstream's progress notification reaches the client
// while the call runs, not with its result: the upstream tool sends it
// and then waits until the test has read it from the function's response
// stream; only then is it released to answer, and the result follows on
// the same stream.
//
// aws-lambda-rie cannot show this: it reads a streamed response whole
// before it answers the invoke (aws/aws-lambda-runtime-interface-emulator
// issue 175). The function therefore runs against streamingRuntime, the
// Runtime API as Lambda offers it to a streaming function: the response
// is the runtime's chunked POST, read here as it arrives, as Lambda
// forwards it to the URL's client. The sync function runs under the
// emulator as in the other tests.
func TestLongCallsStreamedProgress(t *testing.T) {
	rie, bins := emulated(t, "gateway", "sync")
	d := newDeployment(t)
	ctx := context.Background()
	release := make(chan struct{})
	slowURL := waitingUpstream(t, release)
	releaseOnce := sync.OnceFunc(func() { close(release) })
	t.Cleanup(releaseOnce) // before the upstream closes, on failure too
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: slowURL})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewRegistryStore(d.ddb, d.tables.Registry).PutServer(ctx, "slow", doc); err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewKeyStore(d.ddb, d.tables.Keys).Create(ctx, policy.Key{ID: "streamer", SecretHash: policy.HashSecret("k-streamer"),
		Servers: map[string]policy.Rule{"slow": {}}}); err != nil {
		t.Fatal(err)
	}
	syncFn := startFunction(t, rie, "toolrag-sync", bins["sync"], 900, d.env)
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil || rep.Sync.Synced != 2 {
		t.Fatalf("sync: %v %+v", err, rep)
	}

	// The streamed front door's environment (infra/streamed.go).
	env := map[string]string{"TOOL_RAG_FUNCTION_URL": "1", "MCP_GATEWAY_UPSTREAM_TIMEOUT": "896"}
	for k, v := range d.env {
		if _, ok := env[k]; !ok {
			env[k] = v
		}
	}
	rt := startStreaming(t, bins["gateway"], env)
	ini := rt.invoke(t, "k-streamer", "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"stream","version":"1"}}}`)
	sid := ini.header("Mcp-Session-Id")
	if ini.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d %v", ini.StatusCode, ini.Headers)
	}
	ini.rest(t)
	rt.invoke(t, "k-streamer", sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).rest(t)

	call := rt.invoke(t, "k-streamer", sid, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"run_tool",`+
		`"arguments":{"call_name":"slow__wait","arguments":{}},"_meta":{"progressToken":"p-1"}}}`)
	if ct := call.header("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		t.Fatalf("tools/call answered %d %q, want an event stream", call.StatusCode, ct)
	}
	// The upstream is still waiting for release: what arrives now arrived
	// during the call.
	msg := call.event(t)
	if msg.Method != "notifications/progress" || msg.Params["progressToken"] != "p-1" || msg.Params["progress"] != 1.0 || msg.Params["total"] != 2.0 {
		t.Fatalf("before the upstream was released: %s %v %s %s, want its progress under token p-1, 1 of 2", msg.Method, msg.Params, msg.ID, msg.Result)
	}
	releaseOnce()
	msg = call.event(t)
	if string(msg.ID) != "3" || !strings.Contains(string(msg.Result), `"done"`) {
		t.Fatalf("after the release: %s %s %s, want the result of request 3", msg.Method, msg.ID, msg.Result)
	}
	call.rest(t)
}

// waitingUpstream serves one tool, wait, that sends a progress
// notification and then waits for release.
func waitingUpstream(t *testing.T, release <-chan struct{}) string {
	t.Helper()
	s := server.NewMCPServer("slow", "1")
	s.AddTool(mcp.NewTool("wait", mcp.WithDescription("reports progress, then waits until it is released")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
				return mcp.NewToolResultError("no progress token"), nil
			}
			if err := s.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
				map[string]any{"progressToken": req.Params.Meta.ProgressToken, "progress": 1, "total": 2}); err != nil {
				return nil, err
			}
			select {
			case <-release:
				return mcp.NewToolResultText("done"), nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		})
	srv := httptest.NewServer(server.NewStreamableHTTPServer(s))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// streamingRuntime is the Lambda Runtime API as Lambda serves a function
// behind a Function URL in RESPONSE_STREAM mode: it hands out the events
// of invoke and gives each response body to the test as the runtime
// posts it (chunked, of unknown length, with trailers for a late error).
type streamingRuntime struct {
	srv       *httptest.Server
	next      chan []byte
	responses chan *streamedResponse
}

// streamedResponse is one invocation's response: the prelude (status and
// headers) and the body as it arrives.
type streamedResponse struct {
	httpResponse
	body *bufio.Reader
	done chan struct{} // closed when the test has read the body
}

func startStreaming(t *testing.T, bootstrap string, env map[string]string) *streamingRuntime {
	t.Helper()
	rt := &streamingRuntime{next: make(chan []byte, 1), responses: make(chan *streamedResponse, 1)}
	var n atomic.Int64
	rt.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		switch {
		case req.Method == http.MethodGet && req.URL.Path == "/2018-06-01/runtime/invocation/next":
			select {
			case ev := <-rt.next:
				w.Header().Set("Lambda-Runtime-Aws-Request-Id", fmt.Sprintf("req-%d", n.Add(1)))
				w.Header().Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(time.Now().Add(900*time.Second).UnixMilli(), 10))
				w.Header().Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:123456789012:function:toolrag-gateway-stream")
				_, _ = w.Write(ev)
			case <-req.Context().Done():
			}
		case req.Method == http.MethodPost && strings.HasSuffix(req.URL.Path, "/response"):
			body := bufio.NewReader(req.Body)
			prelude, err := body.ReadBytes(0)
			if err == nil {
				_, err = io.ReadFull(body, make([]byte, 7)) // the 8 NUL bytes after the prelude
			}
			r := &streamedResponse{body: body, done: make(chan struct{})}
			if err != nil || req.Header.Get("Content-Type") != "application/vnd.awslambda.http-integration-response" || req.ContentLength != -1 {
				r.StatusCode = -1
				r.Body = fmt.Sprintf("not a streamed Function URL response: %s, %d bytes, %v", req.Header.Get("Content-Type"), req.ContentLength, err)
			} else if err := json.Unmarshal(bytes.TrimSuffix(prelude, []byte{0}), &r.httpResponse); err != nil {
				r.StatusCode, r.Body = -1, fmt.Sprintf("prelude %q: %v", prelude, err)
			}
			rt.responses <- r
			<-r.done
			w.WriteHeader(http.StatusAccepted)
		case req.Method == http.MethodPost:
			b, _ := io.ReadAll(req.Body)
			w.WriteHeader(http.StatusAccepted)
			rt.responses <- &streamedResponse{httpResponse: httpResponse{StatusCode: -1, Body: req.URL.Path + ": " + string(b)}}
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(rt.srv.Close)
	cmd := exec.Command(bootstrap)
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"),
		"AWS_LAMBDA_RUNTIME_API=" + strings.TrimPrefix(rt.srv.URL, "http://"),
		"AWS_LAMBDA_FUNCTION_NAME=toolrag-gateway-stream", "AWS_LAMBDA_FUNCTION_TIMEOUT=900",
		"AWS_LAMBDA_FUNCTION_MEMORY_SIZE=1024", "AWS_LAMBDA_INITIALIZATION_TYPE=on-demand", "AWS_REGION=us-east-1",
		"AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local",
	}
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	startProcess(t, "gateway", cmd)
	return rt
}

// invoke sends an MCP POST as a Function URL event and returns the
// response once its prelude has arrived.
func (rt *streamingRuntime) invoke(t *testing.T, key, sid, body string) *streamedResponse {
	t.Helper()
	var ev map[string]any
	if err := json.Unmarshal(sample(t, "function-url-initialize.json"), &ev); err != nil {
		t.Fatal(err)
	}
	h := ev["headers"].(map[string]any)
	h["authorization"] = "Bearer " + key
	if sid != "" {
		h["mcp-session-id"], h["mcp-protocol-version"] = sid, "2025-11-25"
	}
	ev["body"] = body
	b, _ := json.Marshal(ev)
	rt.next <- b
	select {
	case r := <-rt.responses:
		if r.StatusCode < 0 {
			t.Fatalf("function response: %s", r.Body)
		}
		t.Cleanup(func() { r.finish() })
		return r
	case <-time.After(2 * time.Minute): // a hang, not a speed check
		t.Fatalf("no response within 2 minutes")
	}
	return nil
}

func (r *streamedResponse) finish() {
	select {
	case <-r.done:
	default:
		close(r.done)
	}
}

// rest reads the body to its end.
func (r *streamedResponse) rest(t *testing.T) string {
	t.Helper()
	b, err := io.ReadAll(r.body)
	r.finish()
	if err != nil {
		t.Fatalf("response body: %v", err)
	}
	return string(b)
}

// sseMessage is one JSON-RPC message of the event stream.
type sseMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params map[string]any  `json:"params"`
	Result json.RawMessage `json:"result"`
}

// event reads the next SSE event's message off the stream, as far as it
// has arrived; a stream that ends first fails the test.
func (r *streamedResponse) event(t *testing.T) sseMessage {
	t.Helper()
	got := make(chan sseMessage, 1)
	failed := make(chan error, 1)
	go func() {
		for {
			line, err := r.body.ReadString('\n')
			if err != nil {
				failed <- fmt.Errorf("the stream ended before the next event: %v (%q)", err, line)
				return
			}
			if d, ok := strings.CutPrefix(strings.TrimRight(line, "\r\n"), "data: "); ok {
				var m sseMessage
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					failed <- fmt.Errorf("event %q: %v", d, err)
					return
				}
				got <- m
				return
			}
		}
	}()
	select {
	case m := <-got:
		return m
	case err := <-failed:
		t.Fatal(err)
	case <-time.After(2 * time.Minute): // a hang, not a speed check
		t.Fatal("no event within 2 minutes: the stream holds what was written until the call ends")
	}
	return sseMessage{}
}
