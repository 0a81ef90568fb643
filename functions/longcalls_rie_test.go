package functions_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// withEnv is env with the settings more set.
func withEnv(env map[string]string, more ...string) map[string]string {
	out := map[string]string{}
	for k, v := range env {
		out[k] = v
	}
	for i := 0; i+1 < len(more); i += 2 {
		out[more[i]] = more[i+1]
	}
	return out
}

// modernCall sends a 2026-07-28 tools/call (no session) to the gateway
// function as key.
func modernCall(t *testing.T, gw *function, key string, c testenv.ModernCall) testenv.ToolResult {
	t.Helper()
	var res testenv.ToolResult
	if err := json.Unmarshal(rpcResult(t, postEvent(t, gw, key, c.Headers(), c.Body()), c.ID), &res); err != nil {
		t.Fatal(err)
	}
	return res
}

// modernRPC sends one 2026-07-28 request (no session) to the gateway
// function as key: its result, or its JSON-RPC error.
func modernRPC(t *testing.T, gw *function, key, method, name string, params map[string]any) (json.RawMessage, *rpcErr) {
	t.Helper()
	body, hdr := testenv.ModernRequest(9, method, name, params)
	r := postEvent(t, gw, key, hdr, body)
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *rpcErr         `json:"error"`
	}
	for _, line := range strings.Split(r.Body, "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "data: ")
		if json.Unmarshal([]byte(line), &msg) == nil && string(msg.ID) == "9" {
			return msg.Result, msg.Error
		}
	}
	t.Fatalf("%s: no answer in %d %.500s", method, r.StatusCode, r.Body)
	return nil, nil
}

// TestLongCallsInputRequiredLambdaRIE: the gateway function's binary under
// aws-lambda-rie (DynamoDB Local, gofakes3), two instances sharing
// TOOL_RAG_STATE_KEY. A 2026-07-28 client's call whose upstream asks for
// input gets input_required from one instance, and its retry is completed
// by the other; a tampered state, another principal's retry with the
// owner's state, and an expired state are refused.
func TestLongCallsInputRequiredLambdaRIE(t *testing.T) {
	rie, bins := emulated(t, "gateway", "sync")
	d := newDeployment(t)
	ask := httptest.NewServer(server.NewStreamableHTTPServer(testenv.AskingServer()))
	t.Cleanup(ask.Close)
	d.addServers(t, map[string]string{"ask": ask.URL + "/mcp"}, "owner", "other")
	d.sync(t, rie, bins["sync"], 2)
	env := withEnv(d.env, "TOOL_RAG_STATE_KEY", "the deployment's state key, 32+ bytes")
	one := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, env)
	two := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, env)
	// An instance that gives a client one second to answer.
	brief := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, withEnv(env, "MCP_GATEWAY_INPUT_TTL", "1"))

	call := testenv.ModernCall{ID: 5, Tool: "ask__confirm", Args: map[string]any{"item": "q3.csv"}, Caps: `{"elicitation":{},"sampling":{}}`}
	asked := modernCall(t, one, "k-owner", call)
	if asked.ResultType != "input_required" || len(asked.InputRequests) != 2 || asked.RequestState == "" {
		t.Fatalf("first call: %+v %q", asked, asked.Text())
	}
	if strings.Contains(asked.RequestState, "asked:") {
		t.Errorf("the upstream's own state reached the client: %q", asked.RequestState)
	}
	retry := call
	retry.ID, retry.Responses, retry.State = 6, testenv.AskingYes, asked.RequestState
	if got := modernCall(t, two, "k-owner", retry); got.IsError || got.ResultType == "input_required" || got.Text() != "deleted q3.csv (user: accept; llm said fine)" {
		t.Fatalf("retry on the other instance: %+v %q", got, got.Text())
	}

	refused := func(name, key string, c testenv.ModernCall, why string) {
		t.Helper()
		got := modernCall(t, two, key, c)
		if !got.IsError || !strings.Contains(got.Text(), "requestState of this retry was refused") || !strings.Contains(got.Text(), why) {
			t.Errorf("%s: %+v %q, want refused: %s", name, got, got.Text(), why)
		}
	}
	tampered := retry
	tampered.State = "x" + asked.RequestState[1:]
	refused("tampered state", "k-owner", tampered, "not issued by this gateway or was altered")
	refused("another principal's retry", "k-other", retry, "issued for another call")
	other := retry
	other.Args = map[string]any{"item": "payroll.csv"}
	refused("the state of another call", "k-owner", other, "issued for another call")

	short := modernCall(t, brief, "k-owner", call)
	if short.RequestState == "" {
		t.Fatalf("first call on the brief instance: %+v", short)
	}
	time.Sleep(2 * time.Second) // the state's one second (whole seconds) has passed
	late := retry
	late.State = short.RequestState
	refused("expired state", "k-owner", late, "it expired")
}

// TestLongCallsTasksLambdaRIE: the gateway function's binary under
// aws-lambda-rie. A task-augmented call of a test-scaled "10-minute" tool
// (6 s) is answered with the task's handle; the call runs in an
// asynchronous invocation that the front instance makes through the Lambda
// Invoke API (InvocationType Event, served by testenv.LambdaAPI and handed
// to a third instance under the emulator), which stores the result in the
// bucket and the outcome in the DynamoDB task record; another instance
// serves tasks/get and tasks/result. Another principal's task id is
// answered like an unknown one; a task cancelled from another instance
// stays cancelled.
func TestLongCallsTasksLambdaRIE(t *testing.T) {
	rie, gwBin, d, slow := slowDeployment(t)
	worker := startFunction(t, rie, "toolrag-gateway", gwBin, 900, d.env)
	api := testenv.StartLambdaAPI(t, map[string]testenv.Invoker{"toolrag-gateway": testenv.RIEInvoker(worker.url)})
	front := startFunction(t, rie, "toolrag-gateway", gwBin, 29, withEnv(d.env, "TOOL_RAG_LAMBDA_ENDPOINT", api.URL))
	other := startFunction(t, rie, "toolrag-gateway", gwBin, 29, d.env)

	startTask := func(ms int) string {
		t.Helper()
		res, rerr := modernRPC(t, front, "k-owner", "tools/call", "slow__slow",
			map[string]any{"name": "slow__slow", "arguments": map[string]any{"ms": ms}, "task": map[string]any{"ttl": 600000}})
		var created struct {
			Task struct{ TaskID, Status string }
		}
		if rerr != nil || json.Unmarshal(res, &created) != nil || created.Task.Status != "working" || !strings.HasPrefix(created.Task.TaskID, "task-") {
			t.Fatalf("task-augmented call: %s %+v", res, rerr)
		}
		return created.Task.TaskID
	}
	status := func(gw *function, key, id string) (string, *rpcErr) {
		t.Helper()
		res, rerr := modernRPC(t, gw, key, "tasks/get", "", map[string]any{"taskId": id})
		var st struct{ Status string }
		_ = json.Unmarshal(res, &st)
		return st.Status, rerr
	}

	id := startTask(6000)
	slow.WaitStarted(t, 30*time.Second)
	if st, rerr := status(other, "k-owner", id); st != "working" {
		t.Errorf("while it runs, from another instance: %q %+v", st, rerr)
	}
	if calls := strings.Join(api.Calls(), ";"); calls != "toolrag-gateway Event" {
		t.Fatalf("Lambda API calls: %q", calls)
	}
	_, theirs := status(other, "k-other", id)
	_, unknown := status(other, "k-other", "task-00000000000000000000000000000000")
	if theirs == nil || unknown == nil || theirs.Message != unknown.Message || theirs.Code != unknown.Code {
		t.Errorf("another principal's task: %+v; an unknown one: %+v", theirs, unknown)
	}
	if _, rerr := modernRPC(t, other, "k-other", "tasks/cancel", "", map[string]any{"taskId": id}); rerr == nil || rerr.Message != unknown.Message {
		t.Errorf("another principal's tasks/cancel: %+v", rerr)
	}
	// tasks/result on another instance waits for the end.
	res, rerr := modernRPC(t, other, "k-owner", "tasks/result", "", map[string]any{"taskId": id})
	text, isErr := testenv.ResultText(t, res)
	if rerr != nil || isErr || text != "worked 6000ms" {
		t.Fatalf("tasks/result from another instance: %q %v %+v", text, isErr, rerr)
	}
	if err := slow.WaitEnded(t, time.Second); err != nil {
		t.Errorf("the upstream's call: %v", err)
	}
	if st, _ := status(front, "k-owner", id); st != "completed" {
		t.Errorf("after the result: %q", st)
	}
	if n := len(api.Wait()); n != 0 {
		t.Fatalf("%d asynchronous invocations failed", n)
	}
	resp, err := http.Get(fmt.Sprintf("%s/%s/tasks/%s.json", d.s3.URL, bucket, id))
	if err == nil {
		resp.Body.Close()
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Errorf("the result is not in the bucket: %v %v", err, resp)
	}

	// Cancelled from another instance while its invocation runs: the
	// invocation reads the record, stops the call, and the upstream sees
	// its call cancelled long before its 120 s.
	id = startTask(120_000)
	slow.WaitStarted(t, 30*time.Second)
	if _, rerr := modernRPC(t, other, "k-owner", "tasks/cancel", "", map[string]any{"taskId": id}); rerr != nil {
		t.Fatalf("tasks/cancel: %+v", rerr)
	}
	if err := slow.WaitEnded(t, 60*time.Second); !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled task's upstream call ended with %v, want context.Canceled", err)
	}
	api.Wait()
	if st, _ := status(front, "k-owner", id); st != "cancelled" {
		t.Errorf("a cancelled task after its invocation ended: %q", st)
	}
}

// slowDeployment is a deployment whose one server more is "slow"
// (testenv.SlowServer), synced, with the keys owner and other; it returns
// the emulator and the gateway function's binary.
func slowDeployment(t *testing.T) (rie, gwBin string, d *deployment, slow *testenv.SlowServer) {
	t.Helper()
	rie, bins := emulated(t, "gateway", "sync")
	d = newDeployment(t)
	slow = testenv.StartSlowServer(t)
	d.addServers(t, map[string]string{"slow": slow.URL}, "owner", "other")
	d.sync(t, rie, bins["sync"], 2)
	return rie, bins["gateway"], d, slow
}

// TestLongCallsCancelLambdaRIE: a 2025-11-25 client's call runs on one
// instance of the gateway function under aws-lambda-rie; its
// notifications/cancelled reaches another instance (on Lambda an instance
// runs one invocation at a time, so it always does), which writes a cancel
// record in the DynamoDB sessions table; the running instance reads it and
// the upstream sees its call cancelled. The same notification from
// another principal's session cancels nothing.
func TestLongCallsCancelLambdaRIE(t *testing.T) {
	rie, gwBin, d, slow := slowDeployment(t)
	running := startFunction(t, rie, "toolrag-gateway", gwBin, 120, d.env)
	other := startFunction(t, rie, "toolrag-gateway", gwBin, 29, d.env)
	owner := newLambdaSession(t, running, "k-owner", `{}`)
	stranger := newLambdaSession(t, other, "k-other", `{}`)

	call := func(ms int) (id int, answered chan error) {
		owner.id++
		id = owner.id
		ev := httpEvent(t, owner.key, map[string]string{"mcp-session-id": owner.sid, "mcp-protocol-version": "2025-11-25"},
			fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"slow__slow","arguments":{"ms":%d}}}}`, id, ms))
		answered = make(chan error, 1)
		go func() {
			_, err := testenv.RIEInvoker(running.url)(context.Background(), ev)
			answered <- err
		}()
		slow.WaitStarted(t, 30*time.Second)
		return id, answered
	}
	cancelled := func(s *lambdaSession, id int) {
		t.Helper()
		r := s.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"the user gave up"}}`, id))
		if r.StatusCode != http.StatusAccepted {
			t.Errorf("notifications/cancelled: %d %s", r.StatusCode, r.Body)
		}
	}

	// Another principal names the same request id in its own session:
	// nothing is cancelled (the call works its 8 s to the end).
	id, answered := call(8000)
	cancelled(stranger, id)
	if err := slow.WaitEnded(t, 60*time.Second); err != nil {
		t.Errorf("another principal's notifications/cancelled stopped the call: %v", err)
	}
	if err := <-answered; err != nil {
		t.Errorf("the call's invocation: %v", err)
	}

	id, answered = call(120_000)
	sent := time.Now()
	cancelled(owner.withGateway(other), id)
	err := slow.WaitEnded(t, 60*time.Second)
	took := time.Since(sent)
	if !errors.Is(err, context.Canceled) {
		t.Errorf("the upstream's call ended with %v, want context.Canceled", err)
	}
	select {
	case <-answered:
	case <-time.After(30 * time.Second):
		t.Error("the cancelled call's invocation did not end")
	}
	checks := regexp.MustCompile(`"mcp_cancel_checks_total":(\d+)`).FindAllStringSubmatch(running.logs.String(), -1)
	n := 0
	for _, m := range checks {
		v, _ := strconv.Atoi(m[1])
		n += v
	}
	t.Logf("the upstream saw the cancellation %v after the notification; cancel record reads by the running instance: %d (for an 8 s call and the cancelled one)", took, n)
}
