package gateway

// One tool call, by its call name: policy, schema check, relay, audit line.

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

func (g *Server) directCallHandler(id string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		ctx = withRetry(ctx, req.Params.MultiRoundTripParams)
		res, f := g.call(tracing.WithClientMeta(g.relayProgress(g.withRelay(ctx), req), req.Params.Meta), id, req.GetArguments())
		return answer(ctx, res, f)
	}
}

// relayProgress forwards the upstream's progress notifications for this
// call to the client, under the client's own progress token, when the
// client asked for progress.
func (g *Server) relayProgress(ctx context.Context, req mcp.CallToolRequest) context.Context {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return ctx
	}
	token := req.Params.Meta.ProgressToken
	return upstream.WithProgress(ctx, func(progress, total float64, message string) {
		params := map[string]any{"progressToken": token, "progress": progress}
		if total > 0 {
			params["total"] = total
		}
		if message != "" {
			params["message"] = message
		}
		_ = g.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), params)
	})
}

// errNotFound is worded the same for a missing tool and one outside the
// caller's grant, so the two cannot be told apart.
func notFound(callName string) *mcp.CallToolResult {
	return mcp.NewToolResultErrorf("tool %q not found; use find_tools to discover available tools", callName)
}

// call executes one catalog tool after the policy and schema checks. It
// always returns a result; failures are isError results worded for the
// agent. When the upstream answered with a JSON-RPC error of its own, that
// error comes back too (see answer). Every call is logged (see logCall).
func (g *Server) call(ctx context.Context, callName string, args map[string]any) (*mcp.CallToolResult, *rpcFailure) {
	start := time.Now()
	ctx = startCall(ctx, callName)
	pol, ok := policy.FromContext(ctx)
	if err := policy.CheckName("tool", callName); err != nil {
		g.Metrics.CallsRejected.Add(1)
		g.logCall(ctx, pol.KeyID, "(invalid name)", "invalid_name", start, nil)
		return mcp.NewToolResultErrorf("invalid call_name: %v", err), nil
	}
	set := g.tools.Load()
	id, _ := set.resolve(callName)
	// The catalog record says which server and tool an id stands for; the
	// id is never split again to route a call.
	tool, known := set.byID[id]
	srv, name := tool.Server, tool.Name
	if !ok || !known || !pol.AllowsTool(srv, name) {
		g.Metrics.CallsRejected.Add(1)
		outcome := "unknown_tool"
		if ok && known {
			outcome = "denied" // a tool id the key's policy does not grant
		}
		callSpan(ctx, callName, srv, pol.KeyID, "deny")
		g.logCall(ctx, pol.KeyID, callName, outcome, start, nil)
		return notFound(callName), nil
	}
	if args == nil {
		args = map[string]any{}
	}
	callSpan(ctx, id, srv, pol.KeyID, "allow")
	_, check := tracing.Start(ctx, "schema check")
	err := g.schemas.validate(tool, args)
	tracing.End(check, err)
	if err != nil {
		g.Metrics.CallsRejected.Add(1)
		g.logCall(ctx, pol.KeyID, id, "invalid_arguments", start, err)
		return mcp.NewToolResultErrorf("invalid arguments for %s: %v", callName, err), nil
	}
	rctx, err := g.roundTrip(ctx, srv, id, pol.KeyID, args)
	if err != nil {
		g.Metrics.CallsRejected.Add(1)
		g.logCall(ctx, pol.KeyID, id, "invalid_state", start, nil)
		return mcp.NewToolResultErrorf("%s: %v", callName, err), nil
	}
	g.Metrics.Calls.Add(1)
	ictx, err := g.withIdentity(rctx, srv)
	if err != nil {
		g.logCall(ctx, pol.KeyID, id, "needs_connection", start, nil)
		if f := linkFailure(err); f != nil {
			return failureResult(callName, f, ""), f
		}
		return mcp.NewToolResultErrorf("%s failed: %v", callName, err), nil
	}
	res, err := g.cfg.Upstreams.CallTool(ictx, srv, name, g.upstreamArgs(srv, args))
	if again := g.refused(ctx, srv, err); again != nil {
		g.logCall(ctx, pol.KeyID, id, "needs_connection", start, err)
		if f := linkFailure(again); f != nil {
			return failureResult(callName, f, ""), f
		}
		return mcp.NewToolResultErrorf("%s failed: %v", callName, again), nil
	}
	if err != nil {
		g.Metrics.CallErrors.Add(1)
		g.logCall(ctx, pol.KeyID, id, "upstream_error", start, err)
		text := fmt.Sprintf("%s failed: %v", callName, publicError(err))
		if f := upstreamRPC(err); f != nil {
			return failureResult(callName, f, text), f
		}
		return mcp.NewToolResultError(text), nil
	}
	if res == nil {
		g.logCall(ctx, pol.KeyID, id, "upstream_error", start, errors.New("the upstream returned no result"))
		return mcp.NewToolResultErrorf("%s failed: the upstream returned no result", callName), nil
	}
	if res.NeedsInput() {
		out, err := g.inputRequired(ctx, res, srv, id, pol.KeyID, args)
		if err != nil {
			g.Metrics.CallErrors.Add(1)
			g.logCall(ctx, pol.KeyID, id, "upstream_error", start, err)
			return mcp.NewToolResultErrorf("%s failed: %v", callName, err), nil
		}
		g.logCall(ctx, pol.KeyID, id, "input_required", start, nil)
		return out, nil
	}
	g.gatewayLinks(srv, res)
	if res, err = g.spill(ctx, pol, srv, name, res); err != nil {
		g.Metrics.CallErrors.Add(1)
		g.logCall(ctx, pol.KeyID, id, "upstream_error", start, err)
		return mcp.NewToolResultErrorf("%s failed: %v", callName, err), nil
	}
	outcome := "ok"
	if res.IsError {
		outcome = "tool_error" // the tool ran and reported a failure
	} else if g.cfg.Sequences != nil {
		g.cfg.Sequences.ToolCalled(pol.KeyID, sessionID(ctx), id)
	}
	g.logCall(ctx, pol.KeyID, id, outcome, start, nil)
	return res, nil
}

// logCall writes the audit line of one tool call: which key called which
// tool, the outcome (ok, tool_error, upstream_error, invalid_arguments,
// denied, unknown_tool) and how long it took. Arguments and results are
// never logged: they may hold the caller's data and secrets.
func (g *Server) logCall(ctx context.Context, keyID, tool, outcome string, start time.Time, err error) {
	d := time.Since(start)
	attrs := []slog.Attr{
		slog.String("key", keyID), slog.String("tool", tool), slog.String("outcome", outcome),
		slog.Float64("duration_ms", float64(d.Microseconds())/1000),
	}
	if g.cfg.OnCall != nil {
		defer g.cfg.OnCall(ctx, keyID, tool, outcome, d)
	}
	if err != nil {
		attrs = append(attrs, slog.String("error", err.Error()))
	}
	g.log.LogAttrs(ctx, slog.LevelInfo, "tool call", attrs...)
	endCall(ctx, outcome)
}
