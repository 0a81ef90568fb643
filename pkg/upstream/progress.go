package upstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/mcp"
)

// ProgressFunc receives an upstream's progress notifications for one call.
type ProgressFunc func(progress, total float64, message string)

type progressKey struct{}

// WithProgress asks CallTool to request progress notifications from the
// upstream and deliver them to fn while the call runs.
func WithProgress(ctx context.Context, fn ProgressFunc) context.Context {
	return context.WithValue(ctx, progressKey{}, fn)
}

// Progress tokens are unique per process, so one router serves every
// upstream connection, shared or not.
var (
	progressRoutes sync.Map // token → ProgressFunc
	progressSeq    atomic.Uint64
)

// withProgressToken registers the context's ProgressFunc (if any) under a
// fresh token, sets it on the request and returns the cleanup.
func withProgressToken(ctx context.Context, req *mcp.CallToolRequest) func() {
	fn, _ := ctx.Value(progressKey{}).(ProgressFunc)
	if fn == nil {
		return func() {}
	}
	tok := fmt.Sprintf("toolrag-%d", progressSeq.Add(1))
	if req.Params.Meta == nil {
		req.Params.Meta = &mcp.Meta{}
	}
	req.Params.Meta.ProgressToken = tok
	progressRoutes.Store(tok, ProgressFunc(func(progress, total float64, message string) {
		markNotified(ctx)
		fn(progress, total, message)
	}))
	return func() { progressRoutes.Delete(tok) }
}

// routeNotification delivers an upstream's notifications/progress to the
// call that asked for it; other notifications are ignored.
func routeNotification(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	f := n.Params.AdditionalFields
	tok, ok := f["progressToken"].(string)
	if !ok {
		return
	}
	fn, ok := progressRoutes.Load(tok)
	if !ok {
		return
	}
	num := func(k string) float64 {
		v, _ := f[k].(float64)
		return v
	}
	msg, _ := f["message"].(string)
	fn.(ProgressFunc)(num("progress"), num("total"), msg)
}
