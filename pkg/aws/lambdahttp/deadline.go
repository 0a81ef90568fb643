package lambdahttp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// DefaultMargin is the time an upstream call leaves before the invocation
// deadline: enough to encode and return the answer (the tool error that
// says the call ran out of time) before Lambda stops the function.
const DefaultMargin = 2 * time.Second

// errBudget is the cancel cause of a call stopped by Budget.
var errBudget = errors.New("the Lambda invocation's time ran out")

// Budget returns ctx bounded by its deadline (the invocation's, on
// Lambda) minus margin (DefaultMargin when margin <= 0). A context
// without a deadline is returned as it is.
func Budget(ctx context.Context, margin time.Duration) (context.Context, context.CancelFunc) {
	d, ok := ctx.Deadline()
	if !ok {
		return ctx, func() {}
	}
	if margin <= 0 {
		margin = DefaultMargin
	}
	return context.WithDeadlineCause(ctx, d.Add(-margin), errBudget)
}

// budgetError explains an upstream call Budget stopped.
func budgetError(ctx context.Context, margin, left time.Duration, err error) error {
	if err == nil || !errors.Is(context.Cause(ctx), errBudget) {
		return err
	}
	return fmt.Errorf("%w; the gateway runs on AWS Lambda, where an invocation must answer within the function timeout, "+
		"so upstream calls stop %s before it (this one had %s): call a tool that runs longer as an MCP task (params.task), "+
		"or through the streamed front door, a Function URL whose calls may last 15 minutes (see docs/aws-runtime.md, Long-running tools)",
		err, margin, left.Round(100*time.Millisecond))
}

// Upstreams is an upstream.Manager whose calls are bounded by Budget: a
// call that would outlive the invocation returns an error (a tool error to
// the client) while there is still time to answer.
type Upstreams struct {
	*upstream.Manager
	Margin time.Duration
}

func (u Upstreams) margin() time.Duration {
	if u.Margin <= 0 {
		return DefaultMargin
	}
	return u.Margin
}

// withBudget runs call with ctx bounded by Budget and explains an
// error that Budget caused.
func withBudget[T any](ctx context.Context, u Upstreams, call func(context.Context) (T, error)) (T, error) {
	bctx, cancel := Budget(ctx, u.margin())
	defer cancel()
	var left time.Duration
	if d, ok := bctx.Deadline(); ok {
		left = time.Until(d)
	}
	res, err := call(bctx)
	return res, budgetError(bctx, u.margin(), left, err)
}

func (u Upstreams) CallTool(ctx context.Context, id, name string, args map[string]any) (*mcp.CallToolResult, error) {
	return withBudget(ctx, u, func(ctx context.Context) (*mcp.CallToolResult, error) {
		return u.Manager.CallTool(ctx, id, name, args)
	})
}

func (u Upstreams) GetPrompt(ctx context.Context, id, name string, args map[string]string) (*mcp.GetPromptResult, error) {
	return withBudget(ctx, u, func(ctx context.Context) (*mcp.GetPromptResult, error) {
		return u.Manager.GetPrompt(ctx, id, name, args)
	})
}

func (u Upstreams) ReadResource(ctx context.Context, id, uri string) (*mcp.ReadResourceResult, error) {
	return withBudget(ctx, u, func(ctx context.Context) (*mcp.ReadResourceResult, error) {
		return u.Manager.ReadResource(ctx, id, uri)
	})
}

func (u Upstreams) ListPrompts(ctx context.Context, id string) ([]mcp.Prompt, error) {
	return withBudget(ctx, u, func(ctx context.Context) ([]mcp.Prompt, error) {
		return u.Manager.ListPrompts(ctx, id)
	})
}

func (u Upstreams) ListResources(ctx context.Context, id string) ([]mcp.Resource, error) {
	return withBudget(ctx, u, func(ctx context.Context) ([]mcp.Resource, error) {
		return u.Manager.ListResources(ctx, id)
	})
}

func (u Upstreams) ListResourceTemplates(ctx context.Context, id string) ([]mcp.ResourceTemplate, error) {
	return withBudget(ctx, u, func(ctx context.Context) ([]mcp.ResourceTemplate, error) {
		return u.Manager.ListResourceTemplates(ctx, id)
	})
}

func (u Upstreams) Complete(ctx context.Context, id string, req mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	return withBudget(ctx, u, func(ctx context.Context) (*mcp.CompleteResult, error) {
		return u.Manager.Complete(ctx, id, req)
	})
}

// FrontTimeout is API Gateway's integration timeout (29 s for a REST API,
// 30 s for an HTTP API): the client gets 503 from API Gateway when the
// answer takes longer, however long the function may still run. Its clock
// starts when the request arrives, before the cold start it triggers.
const FrontTimeout = 29 * time.Second

// AnswerBy is when a request that waits (for the gateway's first load)
// must stop waiting to answer in time: margin before the invocation
// deadline, and, for the first invocation of a process (the request that
// caused the cold start, whose clock started before the init phase),
// margin before processStart + front. A zero time means no bound.
func AnswerBy(ctx context.Context, processStart time.Time, first bool, front, margin time.Duration) time.Time {
	var by time.Time
	if d, ok := ctx.Deadline(); ok {
		by = d.Add(-margin)
	}
	if first && front > 0 && !processStart.IsZero() {
		if f := processStart.Add(front - margin); by.IsZero() || f.Before(by) {
			by = f
		}
	}
	return by
}
