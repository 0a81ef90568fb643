package gateway_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// run_tools runs at most the gateway's MaxParallel calls at once, fewer
// when the caller asks for max_concurrency, and every call of the batch
// runs and answers.
func TestRunToolsConcurrencyBound(t *testing.T) {
	var inflight testenv.InFlight
	s := server.NewMCPServer("slow", "1")
	s.AddTool(mcp.NewTool("slow", mcp.WithDescription("Answer after a pause."), mcp.WithString("text")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer inflight.Enter()()
			select {
			case <-time.After(60 * time.Millisecond): // long enough for the calls let through to overlap
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return mcp.NewToolResultText(req.GetString("text", "")), nil
		})
	h := newTestGatewayWith(t, s, 10*time.Second, gateway.HTTPOptions{}, nil, func(c *gateway.Config) { c.MaxParallel = 3 })
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	sess := testenv.OpenRawSession(t, testenv.PostTo(srv.URL+"/mcp"), "fz-agent-secret", nil)

	tests := []struct {
		name    string
		calls   int
		maxConc any // the max_concurrency argument; nil leaves it out
		wantMax int32
	}{
		{"the gateway's bound", 10, nil, 3},
		{"the caller asks for fewer", 10, 2, 2},
		{"one at a time", 4, 1, 1},
		{"the caller cannot raise the bound", 10, 8, 3},
		{"fewer calls than the bound", 2, nil, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inflight.Reset()
			calls := make([]map[string]any, tc.calls)
			for i := range calls {
				calls[i] = map[string]any{"call_name": "alpha__slow", "arguments": map[string]any{"text": "x"}}
			}
			args := map[string]any{"calls": calls}
			if tc.maxConc != nil {
				args["max_concurrency"] = tc.maxConc
			}
			msg := sess.CallTool("run_tools", args)
			var out struct {
				Result struct {
					IsError           bool `json:"isError"`
					StructuredContent struct {
						Succeeded int `json:"succeeded"`
						Failed    int `json:"failed"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			b, _ := json.Marshal(msg)
			if err := json.Unmarshal(b, &out); err != nil || out.Result.IsError {
				t.Fatalf("run_tools: %s", b)
			}
			if sc := out.Result.StructuredContent; sc.Succeeded != tc.calls || sc.Failed != 0 {
				t.Fatalf("succeeded %d, failed %d of %d calls: %s", sc.Succeeded, sc.Failed, tc.calls, b)
			}
			if got := inflight.Max(); got != tc.wantMax {
				t.Errorf("at most %d calls reached the upstream at once, want %d", got, tc.wantMax)
			}
		})
	}
}
