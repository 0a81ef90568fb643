package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"gopkg.in/yaml.v3"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// echoServer returns servers/echo, built once per test binary.
func echoServer(t testing.TB) string { return testenv.GoBinary(t, "./servers/echo") }

const testKeys = `keys:
  - id: admin
    secret: "k-admin"
    admin: true
    servers: {echo: {}}
  - id: agent
    secret: "k-agent"
    servers: {echo: {}}
  - id: narrow
    secret: "k-narrow"
    servers:
      echo:
        tool_prefixes: ["echo", "add"]
        uri_prefixes: ["echo://info"]
        prompt_prefixes: ["nomatch"]
  - id: nogrant
    secret: "k-nogrant"
    servers: {}
  - id: agent-http
    secret: "k-agent-http"
    servers: {echohttp: {}}
  - id: plain
    secret: "k-plain"
    servers: {plain: {tool_prefixes: [rev], uri_prefixes: ["echo://items/"]}}
  - id: everything
    secret: "k-everything"
    admin: true
    servers: {evstdio: {}, evhttp: {}, evsse: {}}
  - id: evhttp-only
    secret: "k-evhttp-only"
    servers: {evhttp: {}, evsse: {}}
  - id: alias
    secret: "k-alias"
    servers: {echoalias: {}}
  - id: live
    secret: "k-live"
    servers: {grower: {}}
  - id: plain-admin
    secret: "k-plain-admin"
    admin: true
    servers: {plain: {}, echo: {}}
  - id: apps
    secret: "k-apps"
    servers: {apps: {}, appshttp: {}}
  - id: apps-admin
    secret: "k-apps-admin"
    admin: true
    servers: {apps: {}, appshttp: {}}
`

type env struct {
	g   *Runtime
	srv *httptest.Server
	url string
}

// startGateway runs a real local gateway (SQLite, index dir, builtin
// embedder, echo over stdio) behind an httptest server.
func startGateway(t *testing.T, extraRegistry string, vars map[string]string) *env {
	return startGatewayB(t, extraRegistry, vars)
}

// startGatewayB is startGateway for a benchmark too: the keys of testKeys
// that grant only servers of the registry, a 64 KiB body limit, and vars
// (later maps win).
func startGatewayB(t testing.TB, extraRegistry string, varsOpt ...map[string]string) *env {
	t.Helper()
	registry := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n%s", echoServer(t), extraRegistry)
	vals := map[string]string{"MCP_GATEWAY_MAX_BODY_BYTES": "65536"}
	for _, vars := range varsOpt {
		maps.Copy(vals, vars)
	}
	return startGatewayWith(t, registry, keysFor(t, testKeys, registry), vals)
}

// keysFor keeps the keys of doc that grant only servers of the registry:
// the gateway refuses a key that grants a server it does not have.
func keysFor(t testing.TB, doc, registry string) string {
	t.Helper()
	var reg struct {
		Servers map[string]any `yaml:"servers"`
	}
	var keys struct {
		Keys []map[string]any `yaml:"keys"`
	}
	if err := yaml.Unmarshal([]byte(registry), &reg); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(doc), &keys); err != nil {
		t.Fatal(err)
	}
	var kept []map[string]any
	for _, k := range keys.Keys {
		ok := true
		servers, _ := k["servers"].(map[string]any)
		for id := range servers {
			if _, found := reg.Servers[id]; !found {
				ok = false
			}
		}
		if ok {
			kept = append(kept, k)
		}
	}
	out, err := yaml.Marshal(map[string]any{"keys": kept})
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

func connect(t *testing.T, url, key string, legacy bool) (*client.Client, <-chan mcp.JSONRPCNotification) {
	t.Helper()
	notes := make(chan mcp.JSONRPCNotification, 16)
	c, _ := testenv.Connect(t, url, testenv.MCPClient{Key: key, Legacy: legacy, Name: "e2e",
		OnNotification: func(n mcp.JSONRPCNotification) { notes <- n }})
	return c, notes
}

func toolNames(t *testing.T, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.ToolNames(res.Tools)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestEndToEnd(t *testing.T) {
	e := startGateway(t, "", nil)

	t.Run("auth", func(t *testing.T) {
		for _, h := range []string{"", "Bearer wrong", "Basic k-agent"} {
			req, _ := http.NewRequest("POST", e.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
			req.Header.Set("Content-Type", "application/json")
			if h != "" {
				req.Header.Set("Authorization", h)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("Authorization %q: status %d, WWW-Authenticate %q", h, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
			}
		}
		resp, err := http.Get(e.srv.URL + "/health")
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("/health: %v %v", resp, err)
		}
		resp.Body.Close()
	})

	for _, legacy := range []bool{true, false} {
		era := map[bool]string{true: "legacy", false: "2026-07-28"}[legacy]
		t.Run("agent/"+era, func(t *testing.T) {
			c, notes := connect(t, e.url, "k-agent", legacy)
			names := toolNames(t, c)
			if len(names) != 4 || !contains(names, "find_tools") || !contains(names, "run_tool") || !contains(names, "run_tools") || !contains(names, "describe_tool") {
				t.Fatalf("agent tools/list = %v, want only the four meta-tools", names)
			}
			res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "reverse the characters of a text", "top_k": 3})
			if err != nil || res.IsError {
				t.Fatalf("find_tools: %v %v", err, res)
			}
			var found struct {
				Results []struct {
					CallName    string          `json:"call_name"`
					InputSchema json.RawMessage `json:"input_schema"`
				} `json:"results"`
				FallbackUsed bool `json:"fallback_used"`
			}
			if err := json.Unmarshal([]byte(testenv.Text(res)), &found); err != nil {
				t.Fatal(err)
			}
			if len(found.Results) == 0 || found.Results[0].CallName != "echo__reverse" || len(found.Results[0].InputSchema) == 0 {
				t.Fatalf("find_tools top result: %+v", found)
			}
			if found.FallbackUsed {
				t.Error("fallback_used with a built index")
			}
			if legacy {
				select {
				case n := <-notes:
					if n.Method != "notifications/tools/list_changed" {
						t.Errorf("notification %q", n.Method)
					}
				case <-time.After(5 * time.Second):
					t.Error("no notifications/tools/list_changed after find_tools")
				}
				if after := toolNames(t, c); !contains(after, "echo__reverse") {
					t.Errorf("strict client: tools/list after find_tools = %v, want echo__reverse registered", after)
				}
			} else if after := toolNames(t, c); len(after) != 4 {
				t.Errorf("stateless client: tools/list = %v", after)
			}
			// Direct call by call_name works for any granted tool, listed or not.
			res, err = testenv.CallTool(c, 30*time.Second, "echo__add", map[string]any{"a": 2, "b": 3})
			if err != nil || res.IsError || testenv.Text(res) != "5" {
				t.Fatalf("direct echo__add: %v %+v", err, res)
			}
			res, err = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__echo", "arguments": map[string]any{"text": "hi"}})
			if err != nil || res.IsError || testenv.Text(res) != "hi" {
				t.Fatalf("run_tool echo: %v %+v", err, res)
			}
			// Arguments are validated before they reach the upstream.
			res, err = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__add", "arguments": map[string]any{"a": "two"}})
			if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "invalid arguments") {
				t.Fatalf("invalid arguments: %v %+v", err, res)
			}
			res, err = testenv.CallTool(c, 30*time.Second, "run_tools", map[string]any{"calls": []any{
				map[string]any{"call_name": "echo__reverse", "arguments": map[string]any{"text": "abc"}, "id": "r"},
				map[string]any{"call_name": "echo__nope", "id": "missing"},
				map[string]any{"call_name": "echo__fail", "arguments": map[string]any{"message": "boom"}, "id": "f"},
			}})
			if err != nil || res.IsError {
				t.Fatalf("run_tools: %v %+v", err, res)
			}
			var batch struct {
				Results []struct {
					ID    string `json:"id"`
					OK    bool   `json:"ok"`
					Error string `json:"error"`
				} `json:"results"`
				Succeeded, Failed int
			}
			if err := json.Unmarshal([]byte(testenv.Text(res)), &batch); err != nil {
				t.Fatal(err)
			}
			if len(batch.Results) != 3 || !batch.Results[0].OK || batch.Results[1].OK || batch.Results[2].OK ||
				!strings.Contains(batch.Results[1].Error, "not found") || !strings.Contains(batch.Results[2].Error, "boom") ||
				batch.Results[0].ID != "r" || batch.Results[1].ID != "missing" {
				t.Fatalf("run_tools isolation: %+v", batch)
			}
		})
	}

	t.Run("admin", func(t *testing.T) {
		c, _ := connect(t, e.url, "k-admin", true)
		names := toolNames(t, c)
		for _, want := range []string{"echo__echo", "echo__add", "echo__reverse", "echo__sleep", "echo__fail", "find_tools"} {
			if !contains(names, want) {
				t.Errorf("admin tools/list lacks %s: %v", want, names)
			}
		}
		ctx := context.Background()
		pl, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil || len(pl.Prompts) != 1 || pl.Prompts[0].Name != "echo__greeting" {
			t.Fatalf("prompts/list: %v %+v", err, pl)
		}
		gp := mcp.GetPromptRequest{}
		gp.Params.Name = "echo__greeting"
		gp.Params.Arguments = map[string]string{"name": "Ada"}
		pr, err := c.GetPrompt(ctx, gp)
		if err != nil || len(pr.Messages) == 0 {
			t.Fatalf("prompts/get: %v %+v", err, pr)
		}
		rl, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
		if err != nil || len(rl.Resources) != 1 || rl.Resources[0].URI != "gateway://echo/echo://info" {
			t.Fatalf("resources/list: %v %+v", err, rl)
		}
		for _, uri := range []string{"gateway://echo/echo://info", "gateway://echo/echo://items/42"} {
			rr := mcp.ReadResourceRequest{}
			rr.Params.URI = uri
			res, err := c.ReadResource(ctx, rr)
			if err != nil || len(res.Contents) == 0 {
				t.Fatalf("resources/read %s: %v", uri, err)
			}
			if tc, ok := res.Contents[0].(mcp.TextResourceContents); !ok || tc.URI != uri {
				t.Errorf("resources/read %s: contents %+v (URI must map back into the gateway namespace)", uri, res.Contents[0])
			}
		}
		tl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil || len(tl.ResourceTemplates) != 1 || tl.ResourceTemplates[0].URITemplate.Raw() != "gateway://echo/echo://items/{id}" {
			t.Fatalf("templates/list: %v %+v", err, tl)
		}
	})

	t.Run("narrow grant", func(t *testing.T) {
		c, _ := connect(t, e.url, "k-narrow", true)
		res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "reverse text", "top_k": 10})
		if err != nil || res.IsError {
			t.Fatal(err, res)
		}
		if s := testenv.Text(res); strings.Contains(s, "echo__reverse") || strings.Contains(s, "echo__sleep") {
			t.Errorf("find_tools leaks ungranted tools: %s", s)
		}
		forbidden, _ := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__reverse", "arguments": map[string]any{"text": "x"}})
		missing, _ := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "echo__doesnotexist", "arguments": map[string]any{}})
		if !forbidden.IsError || strings.ReplaceAll(testenv.Text(forbidden), "reverse", "X") != strings.ReplaceAll(testenv.Text(missing), "doesnotexist", "X") {
			t.Errorf("forbidden vs missing differ: %q / %q", testenv.Text(forbidden), testenv.Text(missing))
		}
		if _, err := testenv.CallTool(c, 30*time.Second, "echo__reverse", map[string]any{"text": "x"}); err == nil {
			t.Error("direct call of an ungranted tool succeeded")
		}
		if r, err := testenv.CallTool(c, 30*time.Second, "echo__echo", map[string]any{"text": "ok"}); err != nil || testenv.Text(r) != "ok" {
			t.Errorf("granted direct call: %v %v", err, r)
		}
		ctx := context.Background()
		pl, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
		if err != nil || len(pl.Prompts) != 0 {
			t.Errorf("prompts/list with prompt_prefixes [nomatch]: %v %+v", err, pl)
		}
		gp := mcp.GetPromptRequest{}
		gp.Params.Name = "echo__greeting"
		if _, err := c.GetPrompt(ctx, gp); err == nil {
			t.Error("prompts/get of an ungranted prompt succeeded")
		}
		rr := mcp.ReadResourceRequest{}
		rr.Params.URI = "gateway://echo/echo://items/1"
		if _, err := c.ReadResource(ctx, rr); err == nil {
			t.Error("resources/read outside uri_prefixes succeeded")
		}
		rr.Params.URI = "gateway://echo/echo://info"
		if _, err := c.ReadResource(ctx, rr); err != nil {
			t.Errorf("granted resources/read: %v", err)
		}
		tl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
		if err != nil || len(tl.ResourceTemplates) != 0 {
			t.Errorf("templates/list outside uri_prefixes: %v %+v", err, tl)
		}
	})

	t.Run("no grant", func(t *testing.T) {
		c, _ := connect(t, e.url, "k-nogrant", false)
		res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "reverse text"})
		if err != nil || res.IsError || !strings.Contains(testenv.Text(res), `"results":[]`) || !strings.Contains(testenv.Text(res), "granted no upstream server") {
			t.Errorf("find_tools for a key granted nothing must say why it finds nothing: %v %+v", err, res)
		}
	})

	t.Run("bad input", func(t *testing.T) {
		post := func(body string, key string) (int, string) {
			req, _ := http.NewRequest("POST", e.url, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("MCP-Protocol-Version", mcp.LATEST_PROTOCOL_VERSION)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, string(b)
		}
		if code, body := post(`{"jsonrpc": "2.0", "id": 1, "method":`, "k-agent"); !strings.Contains(body, "-32700") {
			t.Errorf("malformed JSON: %d %s", code, body)
		}
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", 70000) + `"}}`
		if code, body := post(big, "k-agent"); code != 413 || !strings.Contains(body, "limit") {
			t.Errorf("oversized body: %d %s", code, body)
		}
		deep := strings.Repeat("[", 100) + strings.Repeat("]", 100)
		if code, body := post(deep, "k-agent"); code != 400 || !strings.Contains(body, "nested") {
			t.Errorf("deep JSON: %d %s", code, body)
		}
	})

	t.Run("rest", func(t *testing.T) {
		do := func(method, path, key, body string) (int, map[string]any) {
			return restJSON(t, method, e.srv.URL+path, key, body)
		}
		code, out := do("POST", "/tool-rag/retrieve", "k-agent", `{"query":"add two numbers","top_k":2}`)
		if code != 200 {
			t.Fatalf("retrieve: %d %v", code, out)
		}
		res := out["results"].([]any)
		if len(res) == 0 || res[0].(map[string]any)["tool_id"] != "echo__add" {
			t.Errorf("retrieve results: %v", res)
		}
		if code, out := do("POST", "/tool-rag/retrieve", "k-agent", `{"query":"x","allowed_servers":["other"]}`); code != 200 || len(out["results"].([]any)) != 0 || !strings.Contains(fmt.Sprint(out["note"]), "allowed_servers names no server") {
			t.Errorf("allowed_servers outside the grant must narrow to nothing: %d %v", code, out)
		}
		if code, out := do("POST", "/tool-rag/retrieve", "k-agent", `{"query":"x","bogus":1}`); code != 400 || !strings.Contains(fmt.Sprint(out["error"]), "bogus") {
			t.Errorf("unknown field: %d %v", code, out)
		}
		if code, out := do("POST", "/tool-rag/retrieve", "k-agent", `{"query":"x","top_k":"5"}`); code != 400 || !strings.Contains(fmt.Sprint(out["error"]), "top_k") {
			t.Errorf("wrong type: %d %v", code, out)
		}
		if code, _ := do("GET", "/tool-rag/tool/echo__reverse", "k-agent", ""); code != 200 {
			t.Errorf("GET tool: %d", code)
		}
		if code, _ := do("GET", "/tool-rag/tool/echo__reverse", "k-narrow", ""); code != 404 {
			t.Errorf("GET ungranted tool: %d", code)
		}
		if code, _ := do("GET", "/tool-rag/tool/echo__reverse", "", ""); code != 401 {
			t.Errorf("GET tool without key: %d", code)
		}
		// Make what the counters below must show, so that this subtest
		// does not depend on the ones before it.
		mc, _ := connect(t, e.url, "k-agent", false)
		if _, err := testenv.CallTool(mc, 30*time.Second, "echo__echo", map[string]any{"text": "counted"}); err != nil {
			t.Fatal(err)
		}
		for range 3 {
			do("GET", "/tool-rag/health", "not-a-key", "")
		}
		if code, _ := do("GET", "/tool-rag/metrics", "k-agent", ""); code != 403 {
			t.Errorf("metrics with a non-admin key: %d, want 403", code)
		}
		code, out = do("GET", "/tool-rag/metrics", "k-admin", "")
		calls, _ := out[`mcp_requests_total{method="tools/call"}`].(float64)
		authFailures, _ := out["auth_failures_total"].(float64)
		if code != 200 || out["tools_in_db"] != float64(5) || out["tools_in_index"] != float64(5) || calls < 1 || authFailures < 3 {
			t.Errorf("metrics: %d %v", code, out)
		}
		if code, _ := do("POST", "/tool-rag/reindex", "k-agent", `{"mode":"full"}`); code != 403 {
			t.Errorf("reindex with a non-admin key: %d", code)
		}
		if code, out := do("POST", "/tool-rag/reindex", "k-admin", `{"mode":"incremental"}`); code != 200 {
			t.Errorf("reindex: %d %v", code, out)
		}
	})
}

// TestPlanMetaTool runs the plan meta-tool against an httptest server that
// speaks the OpenAI chat-completions wire format.
func TestPlanMetaTool(t *testing.T) {
	var gotModel string
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Model    string `json:"model"`
			Messages []struct {
				Role    string `json:"role"`
				Content string `json:"content"`
			} `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || r.URL.Path != "/v1/chat/completions" {
			http.Error(w, "bad request", 400)
			return
		}
		gotModel = req.Model
		plan := `{"steps":[{"id":"s1","call_name":"echo__reverse","arguments_hint":{"text":"abc"},"depends_on":[],"group":1},` +
			`{"id":"s2","call_name":"weather__forecast","depends_on":["s1"],"group":2}],"notes":"reverse first"}`
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": plan}}}})
	}))
	defer llm.Close()
	e := startGateway(t, "", map[string]string{
		"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_URL": llm.URL + "/v1/chat/completions", "TOOL_RAG_PLANNER_MODEL": "test-model",
	})
	c, _ := connect(t, e.url, "k-agent", true)
	if names := toolNames(t, c); !contains(names, "plan") || len(names) != 5 {
		t.Fatalf("tools/list with the planner on = %v", names)
	}
	res, err := testenv.CallTool(c, 30*time.Second, "plan", map[string]any{"query": "reverse abc then get the weather"})
	if err != nil || res.IsError {
		t.Fatalf("plan: %v %+v", err, res)
	}
	var plan struct {
		Steps []struct {
			CallName string `json:"call_name"`
		} `json:"steps"`
		Missing []string `json:"missing"`
	}
	if err := json.Unmarshal([]byte(testenv.Text(res)), &plan); err != nil {
		t.Fatal(err)
	}
	if gotModel != "test-model" || len(plan.Steps) != 1 || plan.Steps[0].CallName != "echo__reverse" || !strings.Contains(strings.Join(plan.Missing, " "), "weather__forecast") {
		t.Fatalf("plan = %+v (model %q); the hallucinated tool must be dropped into missing", plan, gotModel)
	}
}

// TestUnprefixedServer checks a server registered with unprefixed: true is
// exposed under its own names, with the policy still enforced, while the
// same tools of a prefixed server keep server__name.
func TestUnprefixedServer(t *testing.T) {
	e := startGateway(t, fmt.Sprintf("  plain:\n    transport: stdio\n    command: %q\n    unprefixed: true\n", echoServer(t)), nil)
	admin, _ := connect(t, e.url, "k-plain-admin", true)
	names := toolNames(t, admin)
	for _, want := range []string{"reverse", "echo", "echo__reverse", "echo__echo"} {
		if !contains(names, want) {
			t.Errorf("admin tools/list lacks %q: %v", want, names)
		}
	}
	if contains(names, "plain__reverse") {
		t.Errorf("unprefixed server also listed with its prefix: %v", names)
	}
	ctx := context.Background()
	rl, err := admin.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, r := range rl.Resources {
		uris = append(uris, r.URI)
	}
	if !contains(uris, "echo://info") || !contains(uris, "gateway://echo/echo://info") {
		t.Errorf("resources/list = %v", uris)
	}
	rr := mcp.ReadResourceRequest{}
	rr.Params.URI = "echo://items/7"
	res, err := admin.ReadResource(ctx, rr)
	if err != nil || len(res.Contents) == 0 || res.Contents[0].(mcp.TextResourceContents).URI != "echo://items/7" {
		t.Fatalf("read unprefixed template resource: %v %+v", err, res)
	}

	user, _ := connect(t, e.url, "k-plain", true)
	if r, err := testenv.CallTool(user, 30*time.Second, "reverse", map[string]any{"text": "ab"}); err != nil || testenv.Text(r) != "ba" {
		t.Fatalf("direct unprefixed call: %v %v", err, r)
	}
	for _, name := range []string{"reverse", "plain__reverse"} {
		if r, _ := testenv.CallTool(user, 30*time.Second, "run_tool", map[string]any{"call_name": name, "arguments": map[string]any{"text": "ab"}}); r == nil || r.IsError || testenv.Text(r) != "ba" {
			t.Errorf("run_tool %s: %+v", name, r)
		}
	}
	if _, err := testenv.CallTool(user, 30*time.Second, "echo", map[string]any{"text": "x"}); err == nil {
		t.Error("call outside tool_prefixes succeeded")
	}
	if _, err := testenv.CallTool(user, 30*time.Second, "echo__reverse", map[string]any{"text": "x"}); err == nil {
		t.Error("call on an ungranted server succeeded")
	}
	rr.Params.URI = "echo://info"
	if _, err := user.ReadResource(ctx, rr); err == nil {
		t.Error("read outside uri_prefixes succeeded")
	}
	found, err := testenv.CallTool(user, 30*time.Second, "find_tools", map[string]any{"query": "reverse text"})
	if err != nil || !strings.Contains(testenv.Text(found), `"call_name":"reverse"`) {
		t.Errorf("find_tools call_name for an unprefixed tool: %v %s", err, testenv.Text(found))
	}
}

// TestProgressRelay checks that an upstream's progress notifications reach
// the client under the client's own progress token, every one of them —
// the last one, sent right before the result, too — in both protocol eras,
// repeated so that a race that loses it shows.
func TestProgressRelay(t *testing.T) {
	fixture := testenv.GoBinary(t, "./internal/conformance/fixture")
	e := startGateway(t, fmt.Sprintf("  plain:\n    transport: stdio\n    command: %q\n", fixture), nil)
	for _, legacy := range []bool{true, false} {
		c, notes := connect(t, e.url, "k-plain-admin", legacy)
		for i := 0; i < 5; i++ {
			progressRound(t, c, notes, fmt.Sprintf("legacy=%v round %d", legacy, i))
		}
	}
}

func progressRound(t *testing.T, c *client.Client, notes <-chan mcp.JSONRPCNotification, round string) {
	t.Helper()
	for _, viaRunTool := range []bool{false, true} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "plain__test_tool_with_progress"
		if viaRunTool {
			req.Params.Name = "run_tool"
			req.Params.Arguments = map[string]any{"call_name": "plain__test_tool_with_progress"}
		}
		token := fmt.Sprintf("client-token-%v-%s", viaRunTool, round)
		req.Params.Meta = &mcp.Meta{ProgressToken: token}
		res, err := c.CallTool(context.Background(), req)
		if err != nil || res.IsError {
			t.Fatalf("call: %v %+v", err, res)
		}
		var got []float64
	drain:
		for {
			select {
			case n := <-notes:
				if n.Method == "notifications/progress" && n.Params.AdditionalFields["progressToken"] == token {
					got = append(got, n.Params.AdditionalFields["progress"].(float64))
				}
			case <-time.After(500 * time.Millisecond):
				break drain
			}
		}
		// The fixture reports 0, 50 and 100, the last right before its result.
		if len(got) != 3 || got[0] != 0 || got[1] != 50 || got[2] != 100 {
			t.Errorf("%s run_tool=%v: progress relayed = %v, want 0, 50, 100", round, viaRunTool, got)
		}
	}
}

// TestServerEverythingUpstream fronts @modelcontextprotocol/server-everything
// (npm) over stdio, SSE and Streamable HTTP and uses it through the gateway.
func TestServerEverythingUpstream(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	httpURL := startEverythingHTTP(t)
	sseURL := startEverything(t, "sse") + "/sse"
	reg := fmt.Sprintf("  evstdio:\n    transport: stdio\n    command: %q\n    args: [stdio]\n  evhttp:\n    transport: streamable_http\n    url: %q\n  evsse:\n    transport: sse\n    url: %q\n", bin, httpURL, sseURL)
	e := startGateway(t, reg, nil)
	c, _ := connect(t, e.url, "k-everything", true)
	for _, srv := range []string{"evstdio", "evhttp", "evsse"} {
		res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": srv + "__echo", "arguments": map[string]any{"message": "hi " + srv}})
		if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "hi "+srv) {
			t.Errorf("%s echo through the gateway: %v %+v", srv, err, res)
		}
		res, err = testenv.CallTool(c, 30*time.Second, srv+"__get-sum", map[string]any{"a": 2, "b": 40})
		if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "42") {
			t.Errorf("%s get-sum direct call: %v %+v", srv, err, res)
		}
	}
	res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "add two numbers together", "top_k": 4})
	if err != nil || !strings.Contains(testenv.Text(res), "__get-sum") {
		t.Errorf("find_tools over server-everything: %v %s", err, testenv.Text(res))
	}
	ctx := context.Background()
	rl, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(rl.Resources) == 0 {
		t.Fatalf("resources/list: %v", err)
	}
	rr := mcp.ReadResourceRequest{}
	rr.Params.URI = rl.Resources[0].URI
	if got, err := c.ReadResource(ctx, rr); err != nil || len(got.Contents) == 0 {
		t.Errorf("resources/read %s: %v", rr.Params.URI, err)
	}
	pl, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil || len(pl.Prompts) == 0 {
		t.Errorf("prompts/list: %v %+v", err, pl)
	}
}
