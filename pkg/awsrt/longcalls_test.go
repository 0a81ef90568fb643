package awsrt

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
)

// TestLongCallsInputRequiredLambda: on the Lambda runtime (DynamoDB
// Local, S3 emulator), a 2026-07-28 client's call whose upstream asks for
// input is answered with input_required by one instance, and its retry is
// completed by another instance holding the same TOOL_RAG_STATE_KEY; a
// tampered state is refused. A 2025-era client, which Lambda cannot reach
// with a server-initiated request, is told so and what to use instead.
func TestLongCallsInputRequiredLambda(t *testing.T) {
	e := newTestEnv(t)
	up := httptest.NewServer(server.NewStreamableHTTPServer(testenv.AskingServer()))
	t.Cleanup(up.Close)
	e.register(t, "echo", up.URL+"/mcp")
	if rep := e.sync(t, string(event(t, "schedule-sync.json", request{}))); rep.Sync.Synced != 1 {
		t.Fatalf("sync: %+v", rep)
	}
	key := []byte("the deployment's state key, 32+ bytes")
	one := lambdahttp.Dispatch(e.gateway(t, func(c *Config) { c.StateKey = key }), lambdahttp.Options{})
	two := lambdahttp.Dispatch(e.gateway(t, func(c *Config) { c.StateKey = key }), lambdahttp.Options{})

	call := testenv.ModernCall{ID: 5, Tool: "echo__confirm", Args: map[string]any{"item": "q3.csv"}, Caps: `{"elicitation":{},"sampling":{}}`}
	send := func(h func(context.Context, json.RawMessage) (any, error), c testenv.ModernCall) testenv.ToolResult {
		t.Helper()
		r := invoke(t, h, event(t, "http-api-run-tool.json", request{auth: agentSecret, body: c.Body(), headers: c.Headers()}))
		var res testenv.ToolResult
		if err := json.Unmarshal(result(t, r, c.ID), &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	ask := send(one, call)
	if ask.ResultType != "input_required" || len(ask.InputRequests) != 2 || ask.RequestState == "" {
		t.Fatalf("first call: %+v %q", ask, ask.Text())
	}
	retry := call
	retry.ID, retry.Responses, retry.State = 6, testenv.AskingYes, ask.RequestState
	if got := send(two, retry); got.IsError || got.Text() != "deleted q3.csv (user: accept; llm said fine)" {
		t.Fatalf("retry on the other instance: %+v %q", got, got.Text())
	}
	retry.State = "x" + ask.RequestState[1:]
	if got := send(two, retry); !got.IsError || !strings.Contains(got.Text(), "requestState of this retry was refused") {
		t.Errorf("tampered state: %+v %q", got, got.Text())
	}

	// A 2025-11-25 session: no stream to ask it on.
	sid := initialize(t, one, "http-api-initialize.json", agentSecret)
	body := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo__confirm","arguments":{"item":"q3.csv"}}}}`
	r := invoke(t, one, event(t, "http-api-run-tool.json", request{auth: agentSecret, session: sid, body: body}))
	text, isErr := testenv.ResultText(t, result(t, r, 4))
	if !isErr || !strings.Contains(text, "runs on AWS Lambda") || !strings.Contains(text, "use a client on protocol 2026-07-28") {
		t.Errorf("2025-era client on Lambda: %q (isError %v)", text, isErr)
	}
}
