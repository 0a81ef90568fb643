package gateway_test

import (
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// extCaps are the capabilities of a client of the tasks extension.
var extCaps = map[string]any{"extensions": map[string]any{gateway.TasksExtension: map[string]any{}}}

// extAnswer is a tools/call or tasks/get answer as an extension client
// reads it.
type extAnswer struct {
	ResultType     string `json:"resultType"`
	TaskID         string `json:"taskId"`
	Status         string `json:"status"`
	TTLMs          int64  `json:"ttlMs"`
	PollIntervalMs int64  `json:"pollIntervalMs"`
	Content        []struct{ Text string }
	Result         *struct{ Content []struct{ Text string } } `json:"result"`
	Error          *rpcError                                  `json:"error"`
}

func extCall(t *testing.T, url, key, tool string, args, caps map[string]any) extAnswer {
	t.Helper()
	res, rerr := rpcCaps(t, url, key, "tools/call", tool, map[string]any{"name": tool, "arguments": args}, caps)
	var a extAnswer
	if rerr != nil || json.Unmarshal(res, &a) != nil {
		t.Fatalf("tools/call %s: %s %+v", tool, res, rerr)
	}
	return a
}

func extGet(t *testing.T, url, key, id string) (extAnswer, *rpcError) {
	t.Helper()
	res, rerr := rpcCaps(t, url, key, "tasks/get", "", map[string]any{"taskId": id}, extCaps)
	var a extAnswer
	if rerr == nil && (json.Unmarshal(res, &a) != nil || a.TaskID != id || a.ResultType != "complete") {
		t.Fatalf("tasks/get %s: %s", id, res)
	}
	return a, rerr
}

// extTask checks that a is a task handle and returns its id.
func extTask(t *testing.T, a extAnswer) string {
	t.Helper()
	if a.ResultType != "task" || !strings.HasPrefix(a.TaskID, "task-") || a.Status != "working" || a.TTLMs <= 0 || a.PollIntervalMs <= 0 {
		t.Fatalf("not a task handle: %+v", a)
	}
	return a.TaskID
}

// extEnd polls task id until it ends.
func extEnd(t *testing.T, url, key, id string) extAnswer {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		a, rerr := extGet(t, url, key, id)
		if rerr != nil {
			t.Fatalf("tasks/get %s: %+v", id, rerr)
		}
		if a.Status != "working" {
			return a
		}
	}
	t.Fatalf("task %s did not end", id)
	return extAnswer{}
}

// TestLongCallsTasksExtensionLocal: the 2026-07-28 tasks extension on the
// local runtime. The gateway declares the extension; a tool that declares
// task support, called by a client that declared the extension, is
// answered with a task handle (here its 2025-11-25 upstream's task), and
// tasks/get carries the result once it completed; a plain tool, or a
// client without the extension, gets the plain result.
func TestLongCallsTasksExtensionLocal(t *testing.T) {
	var stopped atomic.Int32
	url := taskGateway(t, taskUpstream(t, &stopped))

	res, rerr := rpcCaps(t, url, "agent", "server/discover", "", map[string]any{}, extCaps)
	if rerr != nil || !strings.Contains(string(res), `"`+gateway.TasksExtension+`"`) {
		t.Errorf("server/discover does not declare the tasks extension: %s %+v", res, rerr)
	}

	id := extTask(t, extCall(t, url, "agent", "alpha__crunch", map[string]any{"ms": 200}, extCaps))
	if end := extEnd(t, url, "agent", id); end.Status != "completed" || end.Result == nil || len(end.Result.Content) == 0 || end.Result.Content[0].Text != "crunched" {
		t.Errorf("ended upstream task: %+v", end)
	}

	for _, c := range []struct {
		tool string
		caps map[string]any
		want string
	}{
		{"alpha__wait", extCaps, "waited 10ms"},         // no task support
		{"alpha__crunch", map[string]any{}, "crunched"}, // no extension
		{"alpha__crunch", map[string]any{"extensions": map[string]any{}}, "crunched"},
	} {
		a := extCall(t, url, "agent", c.tool, map[string]any{"ms": 10}, c.caps)
		if a.ResultType == "task" || len(a.Content) == 0 || a.Content[0].Text != c.want {
			t.Errorf("%s with %v: %+v, want the plain result %q", c.tool, c.caps, a, c.want)
		}
	}
}

// TestLongCallsTasksExtensionGatewayRun: where the gateway cannot hold a
// call open (the Lambda rule, Config.NoClientStreams), every catalog tool
// call of an extension client becomes the gateway's own task: polled to
// its result, cancelled (its call stopped), refused tasks/update, and
// another principal's task id answered exactly like an unknown one.
func TestLongCallsTasksExtensionGatewayRun(t *testing.T) {
	var stopped atomic.Int32
	url := taskGateway(t, taskUpstream(t, &stopped), func(c *gateway.Config) { c.NoClientStreams = true })

	id := extTask(t, extCall(t, url, "agent", "run_tool", map[string]any{"call_name": "alpha__wait", "arguments": map[string]any{"ms": 200}}, extCaps))
	if end := extEnd(t, url, "agent", id); end.Status != "completed" || end.Result == nil || len(end.Result.Content) == 0 || end.Result.Content[0].Text != "waited 200ms" {
		t.Errorf("ended gateway task: %+v", end)
	}
	if a := extCall(t, url, "agent", "alpha__wait", map[string]any{"ms": 10}, map[string]any{}); a.ResultType == "task" || len(a.Content) == 0 || a.Content[0].Text != "waited 10ms" {
		t.Errorf("client without the extension: %+v", a)
	}

	running := foreverRuns.Load()
	long := extTask(t, extCall(t, url, "agent", "alpha__forever", map[string]any{}, extCaps))
	for wait := time.Now().Add(10 * time.Second); foreverRuns.Load() == running && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond)
	}

	_, unknown := extGet(t, url, "admin", "task-00000000000000000000000000000000")
	for _, m := range []string{"tasks/get", "tasks/cancel", "tasks/update"} {
		_, rerr := rpcCaps(t, url, "admin", m, "", map[string]any{"taskId": long, "inputResponses": map[string]any{}}, extCaps)
		if rerr == nil || unknown == nil || *rerr != *unknown {
			t.Errorf("%s of another principal's task: %+v; an unknown task: %+v", m, rerr, unknown)
		}
	}
	if _, rerr := rpcCaps(t, url, "agent", "tasks/update", "", map[string]any{"taskId": long, "inputResponses": map[string]any{}}, extCaps); rerr == nil || !strings.Contains(rerr.Message, "not waiting for input") {
		t.Errorf("tasks/update: %+v", rerr)
	}

	res, rerr := rpcCaps(t, url, "agent", "tasks/cancel", "", map[string]any{"taskId": long}, extCaps)
	if rerr != nil || string(res) != `{"resultType":"complete"}` {
		t.Fatalf("tasks/cancel: %s %+v", res, rerr)
	}
	if a, _ := extGet(t, url, "agent", long); a.Status != "cancelled" || a.Result != nil {
		t.Errorf("after cancel: %+v", a)
	}
	for deadline := time.Now().Add(10 * time.Second); stopped.Load() < 1 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
	if stopped.Load() != 1 {
		t.Error("the cancelled task's call did not stop at the upstream")
	}
}

// TestLongCallsTasksExtensionAsks: a gateway-run task runs outside any
// client request, so when its upstream (here on 2026-07-28) asks for input
// the task ends with an error result saying so, not with a request the
// client can never answer.
func TestLongCallsTasksExtensionAsks(t *testing.T) {
	url := taskGatewayOf(t, server.NewStreamableHTTPServer(testenv.AskingServer()), func(c *gateway.Config) { c.NoClientStreams = true })
	caps := map[string]any{"elicitation": map[string]any{}, "extensions": extCaps["extensions"]}
	id := extTask(t, extCall(t, url, "agent", "alpha__confirm", map[string]any{"item": "x"}, caps))
	end := extEnd(t, url, "agent", id)
	if end.Status != "completed" || end.Result == nil || len(end.Result.Content) == 0 || !strings.Contains(end.Result.Content[0].Text, "outside any client request") {
		t.Errorf("a task whose upstream asks for input: %+v", end)
	}
}
