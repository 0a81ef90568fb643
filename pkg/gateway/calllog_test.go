package gateway_test

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// TestCallLog: every tool call leaves one audit line naming the key, the
// tool and the outcome, and none of the call's arguments.
func TestCallLog(t *testing.T) {
	logs := &testenv.Buffer{}
	h := newTestGatewayWith(t, upstreamServer(), 5*time.Second, gateway.HTTPOptions{}, nil, func(c *gateway.Config) {
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
	})
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	agent := connect(t, srv.URL+"/mcp", "fz-agent-secret")

	const secret = "hunter2-in-the-arguments"
	calls := []struct {
		tool    string
		args    map[string]any
		logged  string // the tool as logged
		outcome string
	}{
		{"alpha__echo", map[string]any{"text": secret}, "alpha__echo", "ok"},
		{"alpha__fail", map[string]any{"message": secret}, "alpha__fail", "tool_error"},
		{"alpha__add", map[string]any{"a": secret, "b": 1}, "alpha__add", "invalid_arguments"},
		{"beta__echo", map[string]any{"text": secret}, "beta__echo", "denied"},
		{"alpha__nosuch", map[string]any{"text": secret}, "alpha__nosuch", "unknown_tool"},
	}
	for _, c := range calls {
		agent.call(t, "run_tool", map[string]any{"call_name": c.tool, "arguments": c.args})
	}

	type line struct {
		Msg        string   `json:"msg"`
		Key        string   `json:"key"`
		Tool       string   `json:"tool"`
		Outcome    string   `json:"outcome"`
		DurationMS *float64 `json:"duration_ms"`
	}
	var got []line
	for _, l := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(l, secret) {
			t.Errorf("a call's arguments reached the log: %s", l)
		}
		var x line
		if err := json.Unmarshal([]byte(l), &x); err == nil && x.Msg == "tool call" {
			got = append(got, x)
		}
	}
	if len(got) != len(calls) {
		t.Fatalf("%d tool call lines for %d calls: %+v", len(got), len(calls), got)
	}
	for i, c := range calls {
		if g := got[i]; g.Key != "agent" || g.Tool != c.logged || g.Outcome != c.outcome || g.DurationMS == nil {
			t.Errorf("call %d (%s): logged %+v, want key agent, tool %s, outcome %s and a duration", i, c.tool, g, c.logged, c.outcome)
		}
	}
}
