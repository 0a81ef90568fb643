package awsrt

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/aws/s3bucket"
)

// lambdaRPC sends one 2026-07-28 request through an HTTP API event.
func lambdaRPC(t *testing.T, h func(context.Context, json.RawMessage) (any, error), secret, method, name string, params map[string]any) (json.RawMessage, *rpcMessage) {
	t.Helper()
	body, hdr := testenv.ModernRequest(9, method, name, params)
	r := invoke(t, h, event(t, "http-api-run-tool.json", request{auth: secret, body: body, headers: hdr}))
	for _, m := range messages(t, r) {
		if string(m.ID) == "9" {
			if m.Error != nil {
				return nil, &m
			}
			return m.Result, nil
		}
	}
	t.Fatalf("%s: no answer in %d %s", method, r.status, r.body)
	return nil, nil
}

// lambdaHandler is a Lambda function's handler.
type lambdaHandler = func(context.Context, json.RawMessage) (any, error)

// taskLambdas serves a slow upstream ("echo") to Lambda gateways: front
// runs its tasks in asynchronous invocations (through api) of a third,
// and other is another instance sharing their state.
func taskLambdas(t *testing.T) (e *testEnv, api *testenv.LambdaAPI, front, other lambdaHandler) {
	t.Helper()
	e = newTestEnv(t)
	up := testenv.StartSlowServer(t)
	e.register(t, "echo", up.URL)
	if rep := e.sync(t, string(event(t, "schedule-sync.json", request{}))); rep.Sync.Synced != 1 {
		t.Fatalf("sync: %+v", rep)
	}
	worker := e.gateway(t)
	run := lambdahttp.Dispatch(worker, lambdahttp.Options{Task: worker.HandleTask})
	api = testenv.StartLambdaAPI(t, map[string]testenv.Invoker{"toolrag-gateway": func(ctx context.Context, payload []byte) ([]byte, error) {
		out, err := run(ctx, payload)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	}})
	front = lambdahttp.Dispatch(e.gateway(t, func(c *Config) {
		c.SelfFunction, c.LambdaEndpoint = "toolrag-gateway", api.URL
	}), lambdahttp.Options{})
	other = lambdahttp.Dispatch(e.gateway(t), lambdahttp.Options{})
	return e, api, front, other
}

// TestLongCallsTasksLambda: on the Lambda runtime, a task-augmented call
// of a tool whose upstream runs no tasks (a test-scaled "10-minute" tool:
// 3 s here) is answered with the task's handle at once; the call runs in
// an asynchronous invocation of the gateway function made through the
// Lambda API (InvocationType Event), which stores the result in the bucket
// and the outcome in the DynamoDB task record; another instance serves
// tasks/get and tasks/result from there. Another principal's task id is
// answered like an unknown one; a cancelled task stays cancelled when its
// invocation ends.
func TestLongCallsTasksLambda(t *testing.T) {
	e, api, front, other := taskLambdas(t)

	start := time.Now()
	res, rerr := lambdaRPC(t, front, agentSecret, "tools/call", "echo__slow",
		map[string]any{"name": "echo__slow", "arguments": map[string]any{"ms": 3000}, "task": map[string]any{"ttl": 600000}})
	var created struct {
		Task struct{ TaskID, Status string }
	}
	if rerr != nil || json.Unmarshal(res, &created) != nil || created.Task.Status != "working" || !strings.HasPrefix(created.Task.TaskID, "task-") {
		t.Fatalf("task-augmented call: %s %+v", res, rerr)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the task's handle took %v: the call did not leave the request", d)
	}
	id := created.Task.TaskID
	if calls := strings.Join(api.Calls(), ";"); calls != "toolrag-gateway Event" {
		t.Fatalf("Lambda API calls: %q", calls)
	}

	status := func(h func(context.Context, json.RawMessage) (any, error), secret string) (string, *rpcMessage) {
		res, rerr := lambdaRPC(t, h, secret, "tasks/get", "", map[string]any{"taskId": id})
		var st struct{ Status string }
		_ = json.Unmarshal(res, &st)
		return st.Status, rerr
	}
	if st, _ := status(other, agentSecret); st != "working" {
		t.Errorf("while it runs, from another instance: %q", st)
	}
	_, theirs := status(other, devSecret)
	_, unknown := lambdaRPC(t, other, devSecret, "tasks/get", "", map[string]any{"taskId": "task-00000000000000000000000000000000"})
	if theirs == nil || unknown == nil || theirs.Error.Message != unknown.Error.Message || theirs.Error.Code != unknown.Error.Code {
		t.Errorf("another principal's task: %+v; an unknown one: %+v", theirs, unknown)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		st, rerr := status(other, agentSecret)
		if st == "completed" {
			break
		}
		if rerr != nil || time.Now().After(deadline) {
			t.Fatalf("task never completed: %q %+v", st, rerr)
		}
	}
	res, rerr = lambdaRPC(t, other, agentSecret, "tasks/result", "", map[string]any{"taskId": id})
	text, isErr := testenv.ResultText(t, res)
	if rerr != nil || isErr || text != "worked 3000ms" {
		t.Fatalf("tasks/result from another instance: %q %v %+v", text, isErr, rerr)
	}
	if _, _, err := s3bucket.New(e.s3.Client, testBucket).Get(context.Background(), "tasks/"+id+".json", ""); err != nil {
		t.Errorf("the result is not in the bucket: %v", err)
	}

	// Cancelled while its invocation runs: the record stays cancelled.
	res, _ = lambdaRPC(t, front, agentSecret, "tools/call", "echo__slow",
		map[string]any{"name": "echo__slow", "arguments": map[string]any{"ms": 1000}, "task": map[string]any{}})
	_ = json.Unmarshal(res, &created)
	id = created.Task.TaskID
	if _, rerr := lambdaRPC(t, other, agentSecret, "tasks/cancel", "", map[string]any{"taskId": id}); rerr != nil {
		t.Fatalf("tasks/cancel: %+v", rerr)
	}
	api.Wait()
	if st, _ := status(front, agentSecret); st != "cancelled" {
		t.Errorf("a cancelled task after its invocation ended: %q", st)
	}
}
