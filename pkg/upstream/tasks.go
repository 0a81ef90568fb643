package upstream

// Tasks (MCP 2025-11-25 experimental tasks) at an upstream that runs tool
// calls as tasks: a task-augmented tools/call returns the task's handle,
// and tasks/get, tasks/result and tasks/cancel reach the same server.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ErrNoTasks is the answer of CallToolTask when the server does not run
// tool calls (or this tool) as tasks.
var ErrNoTasks = errors.New("the server does not run this tool as a task")

// CallToolTask asks server id to run tool name as a task with the given
// TTL (milliseconds; nil: the server's) and returns the task. A server may
// run the call at once instead (a tool without task support): then done is
// its result and task is nil. It returns an error matching ErrNoTasks when
// the server declares no task-augmented tool calls or refuses them for
// this tool.
func (m *Manager) CallToolTask(ctx context.Context, id, name string, args map[string]any, ttl *int64) (task *mcp.Task, done *mcp.CallToolResult, err error) {
	err = m.call(withTarget(ctx, name), id, string(mcp.MethodToolsCall), false, func(ctx context.Context, c *client.Client) error {
		caps := c.GetServerCapabilities().Tasks
		// Tasks of protocol 2025-11-25 are not part of 2026-07-28 (whose
		// Tasks extension has other methods, not served here): on such a
		// connection the gateway runs the call as its own task.
		if statelessFrom(ctx) != nil || caps == nil || caps.Requests == nil || caps.Requests.Tools == nil || caps.Requests.Tools.Call == nil {
			return ErrNoTasks
		}
		params := map[string]any{"name": name, "arguments": args, "task": mcp.TaskParams{TTL: ttl}}
		raw, err := rawRequest(ctx, c, mcp.MethodToolsCall, params)
		var re *RPCError
		if errors.As(err, &re) && (re.Code == mcp.METHOD_NOT_FOUND || re.Code == mcp.INVALID_PARAMS) {
			return fmt.Errorf("%w: %s", ErrNoTasks, re.Message)
		}
		if err != nil {
			return err
		}
		var res mcp.CreateTaskResult
		if err := json.Unmarshal(raw, &res); err == nil && res.Task.TaskId != "" {
			task = &res.Task
			return nil
		}
		done, err = mcp.ParseCallToolResult(&raw)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	return task, done, nil
}

// GetTask returns the state of task taskID at server id.
func (m *Manager) GetTask(ctx context.Context, id, taskID string) (*mcp.Task, error) {
	return m.taskState(ctx, id, mcp.MethodTasksGet, true, taskID)
}

// TaskResult returns the tool result of task taskID at server id (the
// server answers when the task has ended).
func (m *Manager) TaskResult(ctx context.Context, id, taskID string) (*mcp.CallToolResult, error) {
	var out *mcp.CallToolResult
	err := m.taskRequest(ctx, id, mcp.MethodTasksResult, true, taskID, func(raw json.RawMessage) (err error) {
		out, err = mcp.ParseCallToolResult(&raw)
		return err
	})
	return out, err
}

// CancelTask asks server id to cancel task taskID and returns its state.
func (m *Manager) CancelTask(ctx context.Context, id, taskID string) (*mcp.Task, error) {
	return m.taskState(ctx, id, mcp.MethodTasksCancel, false, taskID)
}

// taskState sends method for task taskID to server id and returns the
// task's state from the answer (tasks/get and tasks/cancel both answer
// with the task).
func (m *Manager) taskState(ctx context.Context, id string, method mcp.MCPMethod, idempotent bool, taskID string) (*mcp.Task, error) {
	var out struct {
		mcp.Result
		mcp.Task
	}
	if err := m.taskRequest(ctx, id, method, idempotent, taskID, func(raw json.RawMessage) error {
		return json.Unmarshal(raw, &out)
	}); err != nil {
		return nil, err
	}
	return &out.Task, nil
}

// taskRequest sends method with {"taskId": taskID} to server id and hands
// the raw result to decode.
func (m *Manager) taskRequest(ctx context.Context, id string, method mcp.MCPMethod, idempotent bool, taskID string, decode func(json.RawMessage) error) error {
	return m.call(ctx, id, string(method), idempotent, func(ctx context.Context, c *client.Client) error {
		raw, err := rawRequest(ctx, c, method, map[string]any{"taskId": taskID})
		if err != nil {
			return err
		}
		return decode(raw)
	})
}

var taskRequests atomic.Int64

// rawRequest sends method with params on the connection of c and returns
// the raw result: on a 2026-07-28 connection with the _meta members and
// headers every request carries there.
func rawRequest(ctx context.Context, c *client.Client, method mcp.MCPMethod, params map[string]any) (json.RawMessage, error) {
	if sc := statelessFrom(ctx); sc != nil {
		raw, rpcErr, err := sc.Request(ctx, method, params)
		if rpcErr != nil {
			return nil, newRPCError(rpcErr, rpcErr.AsError())
		}
		return raw, err
	}
	body, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	// String ids never collide with the mcp-go client's integer ones.
	req := transport.JSONRPCRequest{JSONRPC: mcp.JSONRPC_VERSION, Method: string(method), Params: json.RawMessage(body),
		ID: mcp.NewRequestId("toolrag-task-" + strconv.FormatInt(taskRequests.Add(1), 10))}
	resp, err := c.GetTransport().SendRequest(ctx, req)
	if err != nil {
		return nil, transport.NewError(err)
	}
	if resp == nil {
		return nil, transport.NewError(io.ErrUnexpectedEOF)
	}
	if resp.Error != nil {
		return nil, newRPCError(resp.Error, resp.Error.AsError())
	}
	return resp.Result, nil
}
