package gateway

// Tasks (MCP 2025-11-25 tasks) through the gateway.
//
// A tools/call with params.task starts a task. When the tool's upstream
// runs tool calls as tasks, the gateway starts the task there; otherwise it
// runs the call itself, outside the request (Config.TaskRunner: in this
// process by default). Either way the client gets a task id of the
// gateway's own, and a task record (session.Task, in Config.Tasks: the
// session store) says whose it is, which upstream and tool it belongs to,
// the upstream's own task id, and when it expires. tasks/get,
// tasks/result, tasks/cancel and tasks/list are routed by that record:
// the caller's policy is checked again on every request (a task of a tool
// the key no longer reaches is gone), and another principal's task id is
// answered exactly like one that never existed.
//
// The same records serve the 2026-07-28 tasks extension (tasksext.go):
// a task made for a client of that extension says so (session.Task.Ext)
// and is answered in the extension's shapes.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// TaskUpstreams reaches upstreams that run tool calls as tasks
// (pkg/upstream.Manager).
type TaskUpstreams interface {
	CallToolTask(ctx context.Context, server, name string, args map[string]any, ttl *int64) (task *mcp.Task, done *mcp.CallToolResult, err error)
	GetTask(ctx context.Context, server, taskID string) (*mcp.Task, error)
	TaskResult(ctx context.Context, server, taskID string) (*mcp.CallToolResult, error)
	CancelTask(ctx context.Context, server, taskID string) (*mcp.Task, error)
}

// TaskJob is a call the gateway runs as its own task.
type TaskJob struct {
	Task     session.Task   `json:"task"`
	CallName string         `json:"call_name"`
	Args     map[string]any `json:"args"`
}

// TaskRunner runs a gateway-run task's call outside the request that
// started it, and ends by recording the outcome (Server.RunTask does both).
type TaskRunner interface {
	StartTask(ctx context.Context, job TaskJob) error
}

// Task limits.
const (
	defaultTaskTTL = time.Hour
	maxTaskTTL     = 24 * time.Hour
	minTaskTTL     = time.Minute
	taskPoll       = time.Second
)

var errTaskNotFound = errors.New("task not found")

// isTaskRequest reports whether the gateway answers this request itself.
func (g *Server) isTaskRequest(head *requestHead) bool {
	if g.cfg.Tasks == nil {
		return false
	}
	switch mcp.MCPMethod(head.Method) {
	case mcp.MethodTasksGet, mcp.MethodTasksResult, mcp.MethodTasksCancel, mcp.MethodTasksList, methodTasksUpdate:
		return true
	case mcp.MethodToolsCall:
		return hasTaskParam(head) || g.extTaskWanted(head)
	}
	return false
}

// serveTask answers a task request (isTaskRequest) with a JSON response.
func (g *Server) serveTask(w http.ResponseWriter, r *http.Request, head *requestHead, body []byte) {
	ctx := r.Context()
	pol, ok := policy.FromContext(ctx)
	if !ok {
		writeTaskAnswer(w, head.ID, nil, fmt.Errorf("no caller"))
		return
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments map[string]any  `json:"arguments"`
		Task      mcp.TaskParams  `json:"task"`
		TaskID    string          `json:"taskId"`
		Meta      json.RawMessage `json:"_meta"`
	}
	var msg struct {
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(body, &msg); err == nil && len(msg.Params) > 0 {
		if err := json.Unmarshal(msg.Params, &p); err != nil {
			writeTaskAnswer(w, head.ID, nil, &taskError{mcp.INVALID_PARAMS, "invalid params: " + err.Error()})
			return
		}
	}
	var res any
	var err error
	switch mcp.MCPMethod(head.Method) {
	case mcp.MethodToolsCall:
		res, err = g.startTask(ctx, pol, p.Name, p.Arguments, p.Task.TTL, !hasTaskParam(head))
	case mcp.MethodTasksGet:
		res, err = g.getTask(ctx, pol, p.TaskID)
	case mcp.MethodTasksResult:
		res, err = g.taskResult(ctx, pol, p.TaskID)
	case mcp.MethodTasksCancel:
		res, err = g.cancelTask(ctx, pol, p.TaskID)
	case mcp.MethodTasksList:
		res, err = g.listTasks(ctx, pol)
	case methodTasksUpdate:
		res, err = g.updateTask(ctx, pol, p.TaskID)
	}
	writeTaskAnswer(w, head.ID, res, err)
}

// taskError is a JSON-RPC error of a task request.
type taskError struct {
	code int
	msg  string
}

func (e *taskError) Error() string { return e.msg }

func writeTaskAnswer(w http.ResponseWriter, id json.RawMessage, res any, err error) {
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	out := map[string]any{"jsonrpc": "2.0", "id": id}
	if err != nil {
		code := mcp.INTERNAL_ERROR
		var te *taskError
		switch {
		case errors.As(err, &te):
			code = te.code
		case errors.Is(err, errTaskNotFound):
			code = mcp.INVALID_PARAMS
		}
		out["error"] = map[string]any{"code": code, "message": err.Error()}
	} else {
		out["result"] = res
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_ = json.NewEncoder(w).Encode(out)
}

// hasTaskParam reports whether a tools/call is task-augmented (2025-11-25).
func hasTaskParam(head *requestHead) bool {
	return len(head.Params.Task) > 0 && string(head.Params.Task) != "null"
}

// startTask starts a task-augmented tools/call: at the upstream when it
// runs the tool as a task, else the gateway's own. ext: the call is of a
// client of the 2026-07-28 tasks extension (answered in its shape).
func (g *Server) startTask(ctx context.Context, pol policy.Policy, name string, args map[string]any, ttl *int64, ext bool) (any, error) {
	callName := name
	if name == ToolRun {
		var err error
		if callName, err = stringArg(args, "call_name", true); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		if args, err = objectArg(args, "arguments"); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
	} else if isMeta(name) {
		return nil, &taskError{mcp.INVALID_PARAMS, fmt.Sprintf("%s does not run as a task; call it directly, or run a catalog tool as a task (directly or with run_tool)", name)}
	}
	if args == nil {
		args = map[string]any{}
	}
	set := g.tools.Load()
	id, _ := set.resolve(callName)
	tool, known := set.byID[id]
	if !known || !pol.AllowsTool(tool.Server, tool.Name) {
		return notFound(callName), nil
	}
	if err := g.schemas.validate(tool, args); err != nil {
		return mcp.NewToolResultErrorf("invalid arguments for %s: %v", callName, err), nil
	}
	life := defaultTaskTTL
	if ttl != nil {
		life = min(max(time.Duration(*ttl)*time.Millisecond, minTaskTTL), maxTaskTTL)
	}
	now := time.Now().UTC()
	rec := session.Task{ID: newTaskID(), Principal: pol.KeyID, Server: tool.Server, Tool: id, Name: tool.Name,
		Status: string(mcp.TaskStatusWorking), TTLMs: life.Milliseconds(), PollMs: taskPoll.Milliseconds(),
		Created: now, Updated: now, Expires: now.Add(life), Ext: ext}
	if up, ok := g.cfg.Upstreams.(TaskUpstreams); ok && runsAsTask(tool.Extra) {
		ictx, err := g.withIdentity(ctx, tool.Server)
		if err != nil {
			return mcp.NewToolResultErrorf("%s failed: %v", callName, err), nil
		}
		ms := rec.TTLMs
		t, done, err := up.CallToolTask(ictx, tool.Server, tool.Name, g.upstreamArgs(tool.Server, args), &ms)
		switch {
		case err == nil && done != nil:
			// The server ran the call at once: a task that has ended.
			g.gatewayLinks(tool.Server, done)
			rec.Status = string(mcp.TaskStatusCompleted)
			if rec.Result, err = json.Marshal(done); err != nil {
				return nil, err
			}
			if err := g.cfg.Tasks.PutTask(ctx, rec); err != nil {
				return nil, fmt.Errorf("the gateway could not record the task: %w", err)
			}
			return createdTask(rec), nil
		case err == nil:
			rec.Upstream, rec.Status, rec.Message = t.TaskId, string(t.Status), t.StatusMessage
			if t.PollInterval != nil {
				rec.PollMs = *t.PollInterval
			}
		case !errors.Is(err, upstream.ErrNoTasks):
			return mcp.NewToolResultErrorf("%s failed: %v", callName, publicError(err)), nil
		}
	}
	if err := g.cfg.Tasks.PutTask(ctx, rec); err != nil {
		return nil, fmt.Errorf("the gateway could not record the task: %w", err)
	}
	if rec.Upstream == "" {
		runner := g.cfg.TaskRunner
		if runner == nil {
			runner = localRunner{g}
		}
		if err := runner.StartTask(ctx, TaskJob{Task: rec, CallName: callName, Args: args}); err != nil {
			rec.Status, rec.Message = string(mcp.TaskStatusFailed), "the gateway could not start the task: "+err.Error()
			_ = g.cfg.Tasks.UpdateTask(context.WithoutCancel(ctx), rec)
		}
	}
	g.log.Info("task started", "key", pol.KeyID, "tool", id, "at_upstream", rec.Upstream != "")
	return createdTask(rec), nil
}

// runsAsTask reports whether a tool declares that its server runs it as a
// task (execution.taskSupport optional or required, kept in Extra).
func runsAsTask(extra json.RawMessage) bool {
	if len(extra) == 0 {
		return false
	}
	var x struct {
		Execution struct {
			TaskSupport mcp.TaskSupport `json:"taskSupport"`
		} `json:"execution"`
	}
	if json.Unmarshal(extra, &x) != nil {
		return false
	}
	return x.Execution.TaskSupport == mcp.TaskSupportOptional || x.Execution.TaskSupport == mcp.TaskSupportRequired
}

// localRunner runs a gateway-run task in this process.
type localRunner struct{ g *Server }

func (l localRunner) StartTask(ctx context.Context, job TaskJob) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	l.g.taskCancels.Store(job.Task.ID, cancel)
	go func() {
		defer l.g.taskCancels.Delete(job.Task.ID)
		defer cancel()
		l.g.RunTask(ctx, job)
	}()
	return nil
}

// RunTask runs a gateway-run task's call with ctx (which carries the
// caller's policy) and records its outcome, bounded by the task's expiry.
// It reads the task's record at CancelWatch's pace, and stops the call
// when the task has been cancelled (on any instance); a task cancelled
// meanwhile stays cancelled.
func (g *Server) RunTask(ctx context.Context, job TaskJob) {
	ctx, cancel := context.WithDeadline(inTask(ctx), job.Task.Expires)
	defer cancel()
	// tasks/cancel on another instance: the task's record says so.
	done := make(chan struct{})
	defer close(done)
	go g.watch(ctx, done, cancel, func(ctx context.Context) bool {
		cur, ok, err := g.cfg.Tasks.GetTask(ctx, job.Task.ID)
		return err == nil && ok && cur.Status == string(mcp.TaskStatusCancelled)
	})
	res, _ := g.call(ctx, job.CallName, job.Args)
	rec := job.Task
	if cur, ok, err := g.cfg.Tasks.GetTask(context.WithoutCancel(ctx), rec.ID); err == nil && ok && cur.Ended() {
		return // cancelled
	}
	rec.Updated = time.Now().UTC()
	rec.Status = string(mcp.TaskStatusCompleted)
	if ctx.Err() != nil {
		rec.Status, rec.Message = string(mcp.TaskStatusFailed), "the call did not end before the task expired"
	}
	raw, err := json.Marshal(res)
	if err != nil {
		rec.Status, rec.Message = string(mcp.TaskStatusFailed), err.Error()
	}
	rec.Result = raw
	if store := g.cfg.TaskResults; store != nil {
		if ref, err := store.PutResult(context.WithoutCancel(ctx), rec.ID, raw); err == nil {
			rec.Result, rec.ResultRef = nil, ref
		} else {
			rec.Status, rec.Message, rec.Result = string(mcp.TaskStatusFailed), "the gateway could not store the result: "+err.Error(), nil
		}
	}
	if err := g.cfg.Tasks.UpdateTask(context.WithoutCancel(ctx), rec); err != nil && !errors.Is(err, session.ErrTaskEnded) {
		g.log.Warn("task outcome not recorded", "tool", rec.Tool, "error", err)
	}
}

// errTaskInput answers an upstream that asks for input during a
// gateway-run task.
var errTaskInput = errors.New("the call runs as a task of the gateway's, outside any client request, so the gateway cannot put the server's request for input to its client; call the tool without a task")

// inTask is ctx of a gateway-run task's call: the upstream's requests for
// input (elicitation, sampling; from a 2026-07-28 upstream, those of its
// input_required result) get errTaskInput.
func inTask(ctx context.Context) context.Context {
	return upstream.WithRelay(ctx, upstream.Relay{
		Sample: func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return nil, errTaskInput
		},
		Elicit: func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return nil, errTaskInput
		},
	})
}

// TaskResultStore keeps the results of gateway-run tasks outside the task
// record (S3 on AWS, where a record is a DynamoDB item of at most 400 KB).
type TaskResultStore interface {
	PutResult(ctx context.Context, taskID string, result []byte) (ref string, err error)
	GetResult(ctx context.Context, ref string) ([]byte, error)
}

// ownTask returns the record of task id if it belongs to the caller and
// the caller's policy still reaches its tool; errTaskNotFound otherwise,
// the same for a task that never existed.
func (g *Server) ownTask(ctx context.Context, pol policy.Policy, id string) (session.Task, error) {
	if id == "" {
		return session.Task{}, &taskError{mcp.INVALID_PARAMS, "invalid params: taskId is required"}
	}
	rec, ok, err := g.cfg.Tasks.GetTask(ctx, id)
	if err != nil {
		return session.Task{}, fmt.Errorf("the gateway could not read the task: %w", err)
	}
	if !ok || rec.Principal != pol.KeyID || !pol.AllowsTool(rec.Server, rec.Name) {
		return session.Task{}, errTaskNotFound
	}
	return rec, nil
}

func (g *Server) getTask(ctx context.Context, pol policy.Policy, id string) (any, error) {
	rec, err := g.ownTask(ctx, pol, id)
	if err != nil {
		return nil, err
	}
	if rec.Upstream != "" && !rec.Ended() {
		if rec, err = g.refreshTask(ctx, rec); err != nil {
			return nil, err
		}
	}
	if rec.Ext {
		return g.extDetail(ctx, rec)
	}
	return mcp.GetTaskResult{Task: wireTask(rec)}, nil
}

// refreshTask asks the upstream for the state of its task.
func (g *Server) refreshTask(ctx context.Context, rec session.Task) (session.Task, error) {
	up := g.cfg.Upstreams.(TaskUpstreams)
	ictx, err := g.withIdentity(ctx, rec.Server)
	if err != nil {
		return rec, err
	}
	t, err := up.GetTask(ictx, rec.Server, rec.Upstream)
	if err != nil {
		return rec, fmt.Errorf("the task's server did not answer: %w", publicError(err))
	}
	rec.Status, rec.Message, rec.Updated = string(t.Status), t.StatusMessage, time.Now().UTC()
	if err := g.cfg.Tasks.UpdateTask(ctx, rec); err != nil && !errors.Is(err, session.ErrTaskEnded) {
		g.log.Warn("task state not recorded", "error", err)
	}
	return rec, nil
}

func (g *Server) taskResult(ctx context.Context, pol policy.Policy, id string) (any, error) {
	rec, err := g.ownTask(ctx, pol, id)
	if err != nil {
		return nil, err
	}
	// For a gateway-run task, tasks/result waits for the task to end
	// (polling the record, which another instance may be writing); the
	// upstream's own tasks/result waits for an upstream's task.
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for rec.Upstream == "" && !rec.Ended() {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-tick.C:
		}
		if rec, err = g.ownTask(ctx, pol, id); err != nil {
			return nil, err
		}
	}
	if rec.Upstream == "" && rec.Status == string(mcp.TaskStatusCancelled) {
		return nil, &taskError{mcp.INVALID_PARAMS, "the task was cancelled"}
	}
	res, err := g.endResult(ctx, rec)
	if err != nil {
		return nil, err
	}
	return withRelatedTask(res, rec.ID), nil
}

// endResult is the tool result of a task: asked at the upstream for an
// upstream's task (which waits for its end there), else the one the
// gateway stored when its own task ended.
func (g *Server) endResult(ctx context.Context, rec session.Task) (*mcp.CallToolResult, error) {
	if rec.Upstream != "" {
		ictx, err := g.withIdentity(ctx, rec.Server)
		if err != nil {
			return nil, err
		}
		res, err := g.cfg.Upstreams.(TaskUpstreams).TaskResult(ictx, rec.Server, rec.Upstream)
		if err != nil {
			return nil, fmt.Errorf("the task's server did not answer: %w", publicError(err))
		}
		g.gatewayLinks(rec.Server, res)
		return res, nil
	}
	var err error
	raw := rec.Result
	if rec.ResultRef != "" {
		store := g.cfg.TaskResults
		if store == nil {
			return nil, errors.New("the task's result is stored where this gateway cannot read it")
		}
		if raw, err = store.GetResult(ctx, rec.ResultRef); err != nil {
			return nil, fmt.Errorf("the gateway could not read the task's result: %w", err)
		}
	}
	if rec.Status == string(mcp.TaskStatusFailed) && len(raw) == 0 {
		return nil, errors.New(rec.Message)
	}
	res, err := mcp.ParseCallToolResult((*json.RawMessage)(&raw))
	if err != nil {
		return nil, fmt.Errorf("the task's stored result is unreadable: %w", err)
	}
	return res, nil
}

func withRelatedTask(res *mcp.CallToolResult, id string) *mcp.CallToolResult {
	if res.Meta == nil {
		res.Meta = &mcp.Meta{}
	}
	if res.Meta.AdditionalFields == nil {
		res.Meta.AdditionalFields = map[string]any{}
	}
	res.Meta.AdditionalFields[mcp.RelatedTaskMetaKey] = mcp.RelatedTaskMeta(id)
	return res
}

func (g *Server) cancelTask(ctx context.Context, pol policy.Policy, id string) (any, error) {
	rec, err := g.ownTask(ctx, pol, id)
	if err != nil {
		return nil, err
	}
	if rec.Ended() {
		return nil, &taskError{mcp.INVALID_PARAMS, fmt.Sprintf("the task has already ended (%s)", rec.Status)}
	}
	if rec.Upstream != "" {
		ictx, err := g.withIdentity(ctx, rec.Server)
		if err != nil {
			return nil, err
		}
		if _, err := g.cfg.Upstreams.(TaskUpstreams).CancelTask(ictx, rec.Server, rec.Upstream); err != nil {
			return nil, fmt.Errorf("the task's server did not cancel it: %w", publicError(err))
		}
	}
	rec.Status, rec.Message, rec.Updated = string(mcp.TaskStatusCancelled), "cancelled by the client", time.Now().UTC()
	if err := g.cfg.Tasks.UpdateTask(ctx, rec); errors.Is(err, session.ErrTaskEnded) {
		return nil, &taskError{mcp.INVALID_PARAMS, "the task has already ended"}
	} else if err != nil {
		return nil, fmt.Errorf("the gateway could not record the cancellation: %w", err)
	}
	if cancel, ok := g.taskCancels.Load(rec.ID); ok {
		cancel.(context.CancelFunc)()
	}
	if rec.Ext {
		return extAck, nil
	}
	return mcp.CancelTaskResult{Task: wireTask(rec)}, nil
}

func (g *Server) listTasks(ctx context.Context, pol policy.Policy) (any, error) {
	recs, err := g.cfg.Tasks.ListTasks(ctx, pol.KeyID)
	if err != nil {
		return nil, fmt.Errorf("the gateway could not list the tasks: %w", err)
	}
	out := []mcp.Task{}
	for _, r := range recs {
		if pol.AllowsTool(r.Server, r.Name) {
			out = append(out, wireTask(r))
		}
	}
	return mcp.ListTasksResult{Tasks: out}, nil
}

// wireTask is what a client is told of a task.
func wireTask(r session.Task) mcp.Task {
	ttl, poll := r.TTLMs, r.PollMs
	return mcp.Task{TaskId: r.ID, Status: mcp.TaskStatus(r.Status), StatusMessage: r.Message,
		CreatedAt: r.Created.Format(time.RFC3339), LastUpdatedAt: r.Updated.Format(time.RFC3339), TTL: &ttl, PollInterval: &poll}
}

// newTaskID is a random, unguessable task id.
func newTaskID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return "task-" + hex.EncodeToString(b)
}
