package awsrt

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// withTasksExt adds to params the _meta of a 2026-07-28 client that
// declares the tasks extension.
func withTasksExt(params map[string]any) map[string]any {
	params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-2026", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{"extensions": map[string]any{gateway.TasksExtension: map[string]any{}}}}
	return params
}

// TestLongCallsTasksExtensionLambda: on the Lambda runtime, a tool call of
// a client that declared the 2026-07-28 tasks extension is answered with a
// task handle (resultType "task") at once, the call runs in an
// asynchronous invocation of the gateway function, and another instance's
// tasks/get carries the result (read back from the bucket) once it has
// completed; another principal's task id is answered like an unknown one,
// and a client without the extension gets the plain result.
func TestLongCallsTasksExtensionLambda(t *testing.T) {
	_, api, front, other := taskLambdas(t)

	type answer struct {
		ResultType, TaskID, Status string
		Result                     json.RawMessage
	}
	res, rerr := lambdaRPC(t, front, agentSecret, "tools/call", "echo__slow",
		withTasksExt(map[string]any{"name": "echo__slow", "arguments": map[string]any{"ms": 1500}}))
	var created answer
	if rerr != nil || json.Unmarshal(res, &created) != nil || created.ResultType != "task" || created.Status != "working" || !strings.HasPrefix(created.TaskID, "task-") {
		t.Fatalf("call of an extension client: %s %+v", res, rerr)
	}
	id := created.TaskID
	if calls := strings.Join(api.Calls(), ";"); calls != "toolrag-gateway Event" {
		t.Fatalf("Lambda API calls: %q", calls)
	}

	_, theirs := lambdaRPC(t, other, devSecret, "tasks/get", "", withTasksExt(map[string]any{"taskId": id}))
	_, unknown := lambdaRPC(t, other, devSecret, "tasks/get", "", withTasksExt(map[string]any{"taskId": "task-00000000000000000000000000000000"}))
	if theirs == nil || unknown == nil || theirs.Error.Message != unknown.Error.Message || theirs.Error.Code != unknown.Error.Code {
		t.Errorf("another principal's task: %+v; an unknown one: %+v", theirs, unknown)
	}
	var got answer
	for deadline := time.Now().Add(30 * time.Second); got.Status != "completed"; time.Sleep(200 * time.Millisecond) {
		res, rerr := lambdaRPC(t, other, agentSecret, "tasks/get", "", withTasksExt(map[string]any{"taskId": id}))
		if rerr != nil || json.Unmarshal(res, &got) != nil || got.ResultType != "complete" || time.Now().After(deadline) {
			t.Fatalf("tasks/get: %s %+v", res, rerr)
		}
	}
	if text, isErr := testenv.ResultText(t, got.Result); isErr || text != "worked 1500ms" {
		t.Errorf("the completed task's result: %q %v", text, isErr)
	}

	res, rerr = lambdaRPC(t, front, agentSecret, "tools/call", "echo__slow",
		map[string]any{"name": "echo__slow", "arguments": map[string]any{"ms": 10}})
	if text, isErr := testenv.ResultText(t, res); rerr != nil || isErr || text != "worked 10ms" {
		t.Errorf("a client without the extension: %s %+v", res, rerr)
	}
}
