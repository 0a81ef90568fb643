package gateway

// The 2026-07-28 tasks extension (io.modelcontextprotocol/tasks).
//
// A client of that protocol declares the extension among its per-request
// capabilities; the server then may answer a tools/call with a task handle
// (resultType "task") instead of the tool result, and the client polls
// tasks/get, whose answer carries the result (or the error) once the task
// has ended. The gateway makes such a task when the client declared the
// extension and either the tool declares execution.taskSupport (optional
// or required) or the gateway runs on AWS Lambda (Config.NoClientStreams),
// where a call gets at most the function's timeout; the task is made by
// startTask, kept in the same records and run by the same runners as a
// 2025-11-25 task, and only the answers differ in shape.

import (
	"context"
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// TasksExtension is the id of the 2026-07-28 tasks extension.
const TasksExtension = "io.modelcontextprotocol/tasks"

// methodTasksUpdate answers a task's input requests (tasks extension).
const methodTasksUpdate = "tasks/update"

// extTaskWanted reports whether the gateway answers a tools/call with a
// task of the tasks extension (see the rule above).
func (g *Server) extTaskWanted(head *requestHead) bool {
	if head.Params.Name == nil || !declaresTasksExt(head.Params.Meta) {
		return false
	}
	name := *head.Params.Name
	if name == ToolRun {
		var a struct {
			CallName string `json:"call_name"`
		}
		if json.Unmarshal(head.Params.Arguments, &a) != nil || a.CallName == "" {
			return false // run_tool answers the mistake itself
		}
		name = a.CallName
	} else if isMeta(name) {
		return false
	}
	set := g.tools.Load()
	id, _ := set.resolve(name)
	tool, known := set.byID[id]
	if !known {
		return false
	}
	return g.cfg.NoClientStreams || runsAsTask(tool.Extra)
}

// declaresTasksExt reports whether a request's _meta declares the tasks
// extension among the client's capabilities.
func declaresTasksExt(meta json.RawMessage) bool {
	if len(meta) == 0 {
		return false
	}
	var m struct {
		Caps struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	if json.Unmarshal(meta, &m) != nil {
		return false
	}
	_, ok := m.Caps.Extensions[TasksExtension]
	return ok
}

// extTask is a task as the tasks extension answers it: a CreateTaskResult
// (resultType "task") or a tasks/get result (resultType "complete", with
// the result or error of a task that has ended).
type extTask struct {
	ResultType    mcp.ResultType           `json:"resultType"`
	TaskID        string                   `json:"taskId"`
	Status        string                   `json:"status"`
	StatusMessage string                   `json:"statusMessage,omitempty"`
	CreatedAt     string                   `json:"createdAt"`
	LastUpdatedAt string                   `json:"lastUpdatedAt"`
	TTLMs         int64                    `json:"ttlMs"`
	PollMs        int64                    `json:"pollIntervalMs"`
	Result        any                      `json:"result,omitempty"`
	Error         *mcp.JSONRPCErrorDetails `json:"error,omitempty"`
}

// extAck is the empty acknowledgement of tasks/cancel and tasks/update.
var extAck = map[string]any{"resultType": mcp.ResultTypeComplete}

// resultTypeTask marks a CreateTaskResult.
const resultTypeTask mcp.ResultType = "task"

func newExtTask(r session.Task, rt mcp.ResultType) extTask {
	w := wireTask(r)
	return extTask{ResultType: rt, TaskID: r.ID, Status: r.Status, StatusMessage: r.Message,
		CreatedAt: w.CreatedAt, LastUpdatedAt: w.LastUpdatedAt, TTLMs: r.TTLMs, PollMs: r.PollMs}
}

// createdTask answers the tools/call that made task r, in its client's
// shape.
func createdTask(r session.Task) any {
	if r.Ext {
		return newExtTask(r, resultTypeTask)
	}
	return mcp.CreateTaskResult{Task: wireTask(r)}
}

// extDetail answers tasks/get of an extension task: the result when it
// completed, the error when it failed. An upstream's 2025-11-25 task that
// waits for input is reported working: its input requests reach a client
// only through tasks/result, which the extension does not have.
func (g *Server) extDetail(ctx context.Context, r session.Task) (any, error) {
	out := newExtTask(r, mcp.ResultTypeComplete)
	switch mcp.TaskStatus(r.Status) {
	case mcp.TaskStatusCompleted:
		res, err := g.endResult(ctx, r)
		if err != nil {
			return nil, err
		}
		out.Result = res
	case mcp.TaskStatusFailed:
		out.Error = &mcp.JSONRPCErrorDetails{Code: mcp.INTERNAL_ERROR, Message: r.Message}
	case mcp.TaskStatusInputRequired:
		out.Status = string(mcp.TaskStatusWorking)
	}
	return out, nil
}

// updateTask answers tasks/update. No task of the gateway's waits for
// input: a gateway-run task whose upstream asks for it fails (the call
// runs outside any client request), so every update is refused, after the
// same checks as any task request.
func (g *Server) updateTask(ctx context.Context, pol policy.Policy, id string) (any, error) {
	if _, err := g.ownTask(ctx, pol, id); err != nil {
		return nil, err
	}
	return nil, &taskError{mcp.INVALID_PARAMS, "the task is not waiting for input (the gateway's tasks never ask for it)"}
}
