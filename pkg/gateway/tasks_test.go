package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// taskUpstream runs "crunch" as a task of its own when asked (it declares
// task support), while "wait" and "forever" are plain tools the gateway
// has to run as its own tasks; forever ends only when cancelled. stopped
// counts the calls cancelled: forever's, and crunch tasks cancelled at the
// upstream.
func taskUpstream(t testing.TB, stopped *atomic.Int32) *server.MCPServer {
	hooks := &server.TaskHooks{}
	hooks.AddOnTaskCancelled(func(context.Context, server.TaskMetrics) { stopped.Add(1) })
	released := make(chan struct{})
	t.Cleanup(func() { close(released) })
	s := server.NewMCPServer("tasks", "1.0.0", server.WithToolCapabilities(false), server.WithTaskCapabilities(true, true, true),
		server.WithTaskHooks(hooks))
	s.AddTool(mcp.NewTool("crunch", mcp.WithDescription("Crunch numbers for a while."), mcp.WithNumber("ms", mcp.Required()),
		mcp.WithTaskSupport(mcp.TaskSupportOptional)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			// mcp-go v1.2.1's server runs a task with the context of the
			// HTTP request that started it, which ends with that request's
			// response: the task must not stop then (tasks/cancel marks it
			// cancelled at the upstream, which the hook counts).
			select {
			case <-time.After(time.Duration(req.GetFloat("ms", 0)) * time.Millisecond):
				return mcp.NewToolResultText("crunched"), nil
			case <-released:
				return nil, context.Canceled
			}
		})
	s.AddTool(mcp.NewTool("wait", mcp.WithDescription("Wait a little, then answer."), mcp.WithNumber("ms", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			time.Sleep(time.Duration(req.GetFloat("ms", 0)) * time.Millisecond)
			return mcp.NewToolResultText(fmt.Sprintf("waited %vms", req.GetFloat("ms", 0))), nil
		})
	s.AddTool(mcp.NewTool("forever", mcp.WithDescription("Run until cancelled.")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			foreverRuns.Add(1)
			<-ctx.Done()
			stopped.Add(1)
			return nil, ctx.Err()
		})
	return s
}

// taskGateway serves a gateway with a task store over up; opts adjust
// its config.
func taskGateway(t testing.TB, up *server.MCPServer, opts ...func(*gateway.Config)) string {
	t.Helper()
	// Tasks are those of protocol 2025-11-25, which mcp-go's server serves
	// to clients of that protocol only.
	return taskGatewayOf(t, server.NewStreamableHTTPServer(up,
		server.WithStreamableHTTPProtocolVersions(mcp.LATEST_LEGACY_PROTOCOL_VERSION)), opts...)
}

// taskGatewayOf is taskGateway over an upstream's HTTP handler.
func taskGatewayOf(t testing.TB, up http.Handler, opts ...func(*gateway.Config)) string {
	t.Helper()
	mgr, st, rt := syncedCatalogOf(t, up, 30*time.Second)
	keys, err := config.ParseKeys("keys.yaml", []byte(fastKeys))
	if err != nil {
		t.Fatal(err)
	}
	sessions := session.NewMemory()
	cfg := gateway.Config{Catalog: st, Upstreams: mgr, Retriever: rt, Sessions: sessions,
		Logger: slog.New(slog.DiscardHandler), Tasks: sessions}
	for _, o := range opts {
		o(&cfg)
	}
	gw, err := gateway.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := gw.Reload(context.Background()); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(auth.Middleware(auth.Config{Keys: auth.NewStaticKeys(keys)},
		gw.Handler(gateway.HTTPOptions{SessionIDs: session.NewIDManager(sessions, time.Hour)})))
	t.Cleanup(srv.Close)
	return srv.URL + "/mcp"
}

// foreverRuns counts the calls of taskUpstream's forever that started.
var foreverRuns atomic.Int32

// rpcError is a JSON-RPC error as a client reads it.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// rpc sends one 2026-07-28 request of key and returns its result or error.
func rpc(t testing.TB, url, key, method, name string, params map[string]any) (json.RawMessage, *rpcError) {
	t.Helper()
	return rpcCaps(t, url, key, method, name, params, map[string]any{})
}

// rpcCaps is rpc of a client declaring caps.
func rpcCaps(t testing.TB, url, key, method, name string, params, caps map[string]any) (json.RawMessage, *rpcError) {
	t.Helper()
	params["_meta"] = map[string]any{mcp.MetaKeyProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		mcp.MetaKeyClientInfo: map[string]any{"name": "raw-2026", "version": "1"}, mcp.MetaKeyClientCapabilities: caps}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
	h := fastHeader(key, mcp.LATEST_PROTOCOL_VERSION, "", name)
	h.Set(mcp.HeaderMethod, method)
	if name == "" {
		h.Del(mcp.HeaderName)
	}
	a := post(t, url, h, string(body))
	if a.status != http.StatusOK {
		t.Fatalf("%s: %d %s", method, a.status, a.body)
	}
	raw := a.body
	if strings.HasPrefix(a.contentType, "text/event-stream") {
		for line := range strings.SplitSeq(a.body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id":3`) {
				raw = data
			}
		}
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
		Error  *rpcError       `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &msg); err != nil {
		t.Fatalf("%s: %v in %s", method, err, a.body)
	}
	return msg.Result, msg.Error
}

type wireTask struct {
	Task struct {
		TaskID string `json:"taskId"`
		Status string `json:"status"`
	} `json:"task"`
	TaskID string `json:"taskId"` // tasks/get answers the task's fields at the top
	Status string `json:"status"`
}

func startTask(t testing.TB, url, key, tool string, args map[string]any) string {
	t.Helper()
	res, rerr := rpc(t, url, key, "tools/call", tool, map[string]any{"name": tool, "arguments": args, "task": map[string]any{"ttl": 60000}})
	var w wireTask
	if rerr != nil || json.Unmarshal(res, &w) != nil || !strings.HasPrefix(w.Task.TaskID, "task-") || w.Task.Status != "working" {
		t.Fatalf("task-augmented %s: %s %+v", tool, res, rerr)
	}
	return w.Task.TaskID
}

func taskStatus(t testing.TB, url, key, id string) (string, *rpcError) {
	t.Helper()
	res, rerr := rpc(t, url, key, "tasks/get", "", map[string]any{"taskId": id})
	if rerr != nil {
		return "", rerr
	}
	var w wireTask
	if err := json.Unmarshal(res, &w); err != nil || w.TaskID != id {
		t.Fatalf("tasks/get %s: %s", id, res)
	}
	return w.Status, nil
}

func taskText(t testing.TB, url, key, id string) (string, *rpcError) {
	t.Helper()
	res, rerr := rpc(t, url, key, "tasks/result", "", map[string]any{"taskId": id})
	if rerr != nil {
		return "", rerr
	}
	var r struct {
		Content []struct{ Text string } `json:"content"`
		Meta    map[string]any          `json:"_meta"`
	}
	if err := json.Unmarshal(res, &r); err != nil || len(r.Content) == 0 {
		t.Fatalf("tasks/result %s: %s", id, res)
	}
	if rel, _ := r.Meta[mcp.RelatedTaskMetaKey].(map[string]any); rel["taskId"] != id {
		t.Errorf("tasks/result %s: related task %v", id, r.Meta)
	}
	return r.Content[0].Text, nil
}

// TestLongCallsTasks: task-augmented tools/call through the local gateway.
// A tool whose upstream runs tasks becomes the upstream's task; a plain
// tool is run by the gateway as its own task. tasks/get, tasks/result,
// tasks/cancel and tasks/list are routed by the gateway's task record;
// another principal's task id is answered exactly like an unknown one, and
// never listed; a cancelled task stops its call.
func TestLongCallsTasks(t *testing.T) {
	var stopped atomic.Int32
	url := taskGateway(t, taskUpstream(t, &stopped))

	// At the upstream.
	up := startTask(t, url, "agent", "alpha__crunch", map[string]any{"ms": 300})
	if text, rerr := taskText(t, url, "agent", up); rerr != nil || text != "crunched" {
		t.Fatalf("upstream task result: %q %+v", text, rerr)
	}
	if st, rerr := taskStatus(t, url, "agent", up); rerr != nil || st != "completed" {
		t.Errorf("upstream task after its result: %q %+v", st, rerr)
	}

	// The gateway's own, through run_tool.
	own := startTask(t, url, "agent", "run_tool", map[string]any{"call_name": "alpha__wait", "arguments": map[string]any{"ms": 200}})
	if st, _ := taskStatus(t, url, "agent", own); st != "working" {
		t.Errorf("gateway task while running: %q", st)
	}
	if text, rerr := taskText(t, url, "agent", own); rerr != nil || text != "waited 200ms" {
		t.Fatalf("gateway task result: %q %+v", text, rerr)
	}
	if st, _ := taskStatus(t, url, "agent", own); st != "completed" {
		t.Errorf("gateway task after its result: %q", st)
	}

	// Another principal (admin may call alpha's tools) sees none of it.
	_, unknown := taskStatus(t, url, "admin", "task-00000000000000000000000000000000")
	for _, id := range []string{up, own} {
		for _, m := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
			_, rerr := rpc(t, url, "admin", m, "", map[string]any{"taskId": id})
			if rerr == nil || unknown == nil || *rerr != *unknown {
				t.Errorf("%s of another principal's task: %+v; an unknown task: %+v", m, rerr, unknown)
			}
		}
	}

	// Cancel: the gateway's own task stops its call; the upstream's is
	// cancelled at the upstream.
	running := foreverRuns.Load()
	long := startTask(t, url, "agent", "alpha__forever", map[string]any{})
	longUp := startTask(t, url, "agent", "alpha__crunch", map[string]any{"ms": 60000})
	for wait := time.Now().Add(10 * time.Second); foreverRuns.Load() == running && time.Now().Before(wait); {
		time.Sleep(10 * time.Millisecond) // the call has reached the upstream
	}
	for _, id := range []string{long, longUp} {
		res, rerr := rpc(t, url, "agent", "tasks/cancel", "", map[string]any{"taskId": id})
		var w wireTask
		if rerr != nil || json.Unmarshal(res, &w) != nil || w.Status != "cancelled" {
			t.Fatalf("tasks/cancel: %s %+v", res, rerr)
		}
		if st, _ := taskStatus(t, url, "agent", id); st != "cancelled" {
			t.Errorf("after cancel: %q", st)
		}
		if _, rerr := rpc(t, url, "agent", "tasks/cancel", "", map[string]any{"taskId": id}); rerr == nil || !strings.Contains(rerr.Message, "already ended") {
			t.Errorf("second cancel: %+v", rerr)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for stopped.Load() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := stopped.Load(); n != 2 {
		t.Errorf("%d of the 2 cancelled calls stopped at the upstream", n)
	}
	if _, rerr := taskText(t, url, "agent", long); rerr == nil || !strings.Contains(rerr.Message, "cancelled") {
		t.Errorf("result of a cancelled task: %+v", rerr)
	}

	// tasks/list: the caller's tasks only.
	list := func(key string) []string {
		res, rerr := rpc(t, url, key, "tasks/list", "", map[string]any{})
		var l struct{ Tasks []struct{ TaskID string } }
		if rerr != nil || json.Unmarshal(res, &l) != nil {
			t.Fatalf("tasks/list: %s %+v", res, rerr)
		}
		var ids []string
		for _, x := range l.Tasks {
			ids = append(ids, x.TaskID)
		}
		slices.Sort(ids)
		return ids
	}
	want := []string{up, own, long, longUp}
	slices.Sort(want)
	if got := list("agent"); !slices.Equal(got, want) {
		t.Errorf("agent's tasks/list: %v, want %v", got, want)
	}
	if got := list("admin"); len(got) != 0 {
		t.Errorf("admin's tasks/list shows %v", got)
	}
}
