package gateway_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// roundTripGateways serves n gateways ("instances") over the same catalog
// and upstream, all sealing with key; ttl[i] (when given) is instance i's
// Config.InputTTL.
func roundTripGateways(t testing.TB, up *server.MCPServer, key []byte, ttl ...time.Duration) []string {
	t.Helper()
	mgr, st, rt := syncedCatalog(t, up, 10*time.Second)
	keys, err := config.ParseKeys("keys.yaml", []byte(fastKeys))
	if err != nil {
		t.Fatal(err)
	}
	urls := make([]string, len(ttl))
	for i := range ttl {
		sessions := session.NewMemory()
		gw, err := gateway.New(gateway.Config{Catalog: st, Upstreams: mgr, Retriever: rt, Sessions: sessions,
			Logger: slog.New(slog.DiscardHandler), StateKey: key, InputTTL: ttl[i]})
		if err != nil {
			t.Fatal(err)
		}
		if err := gw.Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		h := gw.Handler(gateway.HTTPOptions{SessionIDs: session.NewIDManager(sessions, time.Hour)})
		srv := httptest.NewServer(auth.Middleware(auth.Config{Keys: auth.NewStaticKeys(keys)}, h))
		t.Cleanup(srv.Close)
		urls[i] = srv.URL + "/mcp"
	}
	return urls
}

// modernCall is a 2026-07-28 tools/call of key.
type modernCall struct {
	key string
	testenv.ModernCall
}

func (c modernCall) send(t testing.TB, url string) testenv.ToolResult {
	t.Helper()
	c.ID = 7
	h := fastHeader(c.key, mcp.LATEST_PROTOCOL_VERSION, "", c.Tool)
	a := post(t, url, h, c.Body())
	if a.status != http.StatusOK {
		t.Fatalf("tools/call %s: %d %s", c.Tool, a.status, a.body)
	}
	raw := a.body
	if strings.HasPrefix(a.contentType, "text/event-stream") {
		for line := range strings.SplitSeq(a.body, "\n") {
			if data, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(data, `"id":7`) {
				raw = data
			}
		}
	}
	var msg struct {
		Result *testenv.ToolResult `json:"result"`
		Error  *json.RawMessage    `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &msg); err != nil || msg.Result == nil {
		t.Fatalf("tools/call %s: %v in %s", c.Tool, err, a.body)
	}
	return *msg.Result
}

// TestLongCallsInputRequiredAcrossInstances: a 2026-07-28 client's call
// whose upstream asks for elicitation and sampling is answered with
// input_required by one gateway instance; the retry with the answers,
// sent to another instance holding the same key, completes at the same
// upstream with the upstream's own state. A tampered state, another
// principal's, another call's and an expired one are refused; the client's
// capabilities reach the upstream (a client that cannot sample is not
// asked to).
func TestLongCallsInputRequiredAcrossInstances(t *testing.T) {
	key := []byte("a key shared by every instance!!")
	urls := roundTripGateways(t, testenv.AskingServer(), key, 0, 0, time.Second)
	a, b, quick := urls[0], urls[1], urls[2]
	both := `{"elicitation":{},"sampling":{}}`
	first := modernCall{"agent", testenv.ModernCall{Tool: "alpha__confirm", Args: map[string]any{"item": "report.pdf"}, Caps: both}}

	ask := first.send(t, a)
	if ask.ResultType != "input_required" || len(ask.InputRequests) != 2 || ask.RequestState == "" {
		t.Fatalf("first call: %+v", ask)
	}
	if !strings.Contains(string(ask.InputRequests["ok"]), "Delete report.pdf?") || !strings.Contains(string(ask.InputRequests["llm"]), "sampling/createMessage") {
		t.Errorf("input requests: %s / %s", ask.InputRequests["ok"], ask.InputRequests["llm"])
	}
	if strings.Contains(ask.RequestState, "asked") || strings.Contains(ask.RequestState, "report") {
		t.Errorf("the gateway's state shows the upstream's: %q", ask.RequestState)
	}

	retry := first
	retry.Responses, retry.State = testenv.AskingYes, ask.RequestState
	done := retry.send(t, b)
	if done.IsError || done.ResultType == "input_required" || done.Text() != "deleted report.pdf (user: accept; llm said fine)" {
		t.Fatalf("retry on another instance: %+v %q", done, done.Text())
	}
	// The same retry through run_tool (the meta-tool's own arguments are
	// what the state is bound to there).
	viaRun := modernCall{"agent", testenv.ModernCall{Tool: "run_tool", Caps: both,
		Args: map[string]any{"call_name": "alpha__confirm", "arguments": map[string]any{"item": "a.txt"}}}}
	ask2 := viaRun.send(t, b)
	if ask2.ResultType != "input_required" {
		t.Fatalf("run_tool: %+v %q", ask2, ask2.Text())
	}
	viaRun.Responses, viaRun.State = testenv.AskingYes, ask2.RequestState
	if got := viaRun.send(t, a); got.IsError || got.Text() != "deleted a.txt (user: accept; llm said fine)" {
		t.Errorf("run_tool retry: %+v %q", got, got.Text())
	}

	refused := func(name string, c modernCall, url, want string) {
		t.Helper()
		got := c.send(t, url)
		if !got.IsError || !strings.Contains(got.Text(), "requestState of this retry was refused") || !strings.Contains(got.Text(), want) {
			t.Errorf("%s: %+v %q", name, got, got.Text())
		}
	}
	tampered := retry
	tampered.State = ask.RequestState[:len(ask.RequestState)-4] + "AAAA"
	refused("tampered", tampered, b, "not issued by this gateway or was altered")
	other := retry
	other.key = "admin" // admin is granted alpha too
	refused("another principal", other, b, "issued for another call")
	otherArgs := retry
	otherArgs.Args = map[string]any{"item": "payroll.xlsx"}
	refused("another call's arguments", otherArgs, b, "issued for another call")
	foreign := retry
	foreign.State = mustSeal(t, urls, first) // made by a gateway with another key
	refused("another key", foreign, b, "not issued by this gateway")

	late := first.send(t, quick) // sealed for 1 s
	time.Sleep(2100 * time.Millisecond)
	expired := first
	expired.Responses, expired.State = testenv.AskingYes, late.RequestState
	refused("expired", expired, b, "it expired")

	// Only elicitation declared: the upstream sees that and does not ask
	// for sampling.
	elicitOnly := first
	elicitOnly.Caps = `{"elicitation":{}}`
	if got := elicitOnly.send(t, a); got.ResultType != "input_required" || len(got.InputRequests) != 1 || got.InputRequests["ok"] == nil {
		t.Errorf("client without sampling: %+v", got)
	}
}

// mustSeal returns the state a gateway with another key gives first.
func mustSeal(t testing.TB, _ []string, first modernCall) string {
	t.Helper()
	url := roundTripGateways(t, testenv.AskingServer(), []byte("another key, another deployment"), 0)[0]
	got := first.send(t, url)
	if got.RequestState == "" {
		t.Fatalf("no state from the other deployment: %+v", got)
	}
	return got.RequestState
}

// TestLongCallsInputRequiredMCPGoClient: mcp-go's 2026-07-28 client runs
// the round trip through the gateway by itself (its elicitation and
// sampling handlers answer the input requests), seeing only the result.
func TestLongCallsInputRequiredMCPGoClient(t *testing.T) {
	url := roundTripGateways(t, testenv.AskingServer(), nil, 0)[0]
	c, _ := testenv.Connect(t, url, testenv.MCPClient{Key: fastSecrets["agent"], Options: []client.ClientOption{
		client.WithElicitationHandler(elicitFunc(func(_ context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"sure": true}}}, nil
		})),
		client.WithSamplingHandler(samplerFunc(func(context.Context, mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{SamplingMessage: mcp.SamplingMessage{Role: mcp.RoleAssistant, Content: mcp.NewTextContent("sure")}, Model: "m"}, nil
		})),
	}})
	req := mcp.CallToolRequest{}
	req.Params.Name, req.Params.Arguments = "alpha__confirm", map[string]any{"item": "b.txt"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if got := testenv.TextSep(res, "\n"); res.IsError || got != "deleted b.txt (user: accept; llm said sure)" {
		t.Errorf("mcp-go client: %q (isError %v)", got, res.IsError)
	}
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}
