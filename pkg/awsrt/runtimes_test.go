package awsrt

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// TestRuntimesAgreeUnprefixedAndPlan runs the same registry (a server
// registered with unprefixed: true next to a prefixed one) and the same
// planner settings on both runtimes, the local one and the Lambda
// functions over DynamoDB Local and S3: both offer the plan meta-tool,
// expose the unprefixed server's tools under their own names, list the same
// tools and answer a call of an unprefixed tool. pkg/app derives these
// inputs for both.
func TestRuntimesAgreeUnprefixedAndPlan(t *testing.T) {
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		plan := `{"steps":[{"id":"s1","call_name":"reverse","depends_on":[],"group":1}]}`
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": plan}}}})
	}))
	defer llm.Close()
	vars := map[string]string{
		"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_URL": llm.URL + "/v1/chat/completions", "TOOL_RAG_PLANNER_MODEL": "test-model",
	}
	echo := startEcho(t)
	const secret = "k-both"
	ctx := context.Background()

	// The Lambda runtime: the registry table, the sync function, the
	// gateway function.
	e := newTestEnv(t)
	e.register(t, "echo", echo)
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: echo, Unprefixed: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := e.registry.PutServer(ctx, "plain", doc); err != nil {
		t.Fatal(err)
	}
	if err := e.keys.Create(ctx, policy.Key{ID: "both", SecretHash: policy.HashSecret(secret), Admin: true,
		Servers: map[string]policy.Rule{"echo": {}, "plain": {}}}); err != nil {
		t.Fatal(err)
	}
	e.sync(t, "")
	g := e.gateway(t, func(c *Config) { c.Getenv = func(k string) string { return vars[k] } })
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	sid := initialize(t, h, "http-api-initialize.json", secret)
	r := invoke(t, h, event(t, "http-api-tools-list.json", request{auth: secret, session: sid}))
	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(result(t, r, 2), &list); err != nil {
		t.Fatal(err)
	}
	var onLambda []string
	for _, tool := range list.Tools {
		onLambda = append(onLambda, tool.Name)
	}
	call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"reverse","arguments":{"text":"ab"}}}`
	r = invoke(t, h, event(t, "http-api-find-tools.json", request{auth: secret, session: sid, body: call}))
	if text, isErr := testenv.ResultText(t, result(t, r, 3)); isErr || text != "ba" {
		t.Errorf("Lambda: reverse = %q (error %v)", text, isErr)
	}

	// The local runtime, with the same registry and settings.
	registry := fmt.Sprintf("servers:\n  echo:\n    transport: streamable_http\n    url: %q\n  plain:\n    transport: streamable_http\n    url: %q\n    unprefixed: true\n", echo, echo)
	keys := fmt.Sprintf("keys:\n  - id: both\n    secret: %q\n    admin: true\n    servers: {echo: {}, plain: {}}\n", secret)
	lg := localtest.Start(t, localtest.Options{Registry: registry, Keys: keys, Env: vars})
	c, _ := testenv.Connect(t, lg.URL, testenv.MCPClient{Key: secret, Legacy: true})
	lt, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var onLocal []string
	for _, tool := range lt.Tools {
		onLocal = append(onLocal, tool.Name)
	}
	if res, err := testenv.CallTool(c, 30*time.Second, "reverse", map[string]any{"text": "ab"}); err != nil || testenv.Text(res) != "ba" {
		t.Errorf("local: reverse = %v %v", res, err)
	}

	slices.Sort(onLambda)
	slices.Sort(onLocal)
	for rt, names := range map[string][]string{"Lambda": onLambda, "local": onLocal} {
		for _, want := range []string{"plan", "find_tools", "reverse", "echo__reverse"} {
			if !slices.Contains(names, want) {
				t.Errorf("%s tools/list lacks %q: %v", rt, want, names)
			}
		}
		if slices.Contains(names, "plain__reverse") {
			t.Errorf("%s lists the unprefixed server with its prefix too: %v", rt, names)
		}
	}
	if !slices.Equal(onLambda, onLocal) {
		t.Errorf("the runtimes list different tools:\nLambda %v\nlocal  %v", onLambda, onLocal)
	}
}
