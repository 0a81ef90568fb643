package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestStreamed checks the streamed front door: off by default (no URL,
// no second function, tasks in the gateway itself); on, a Function URL in
// RESPONSE_STREAM mode with AuthType NONE on a second function with the
// gateway's role and environment, 900 s and its own reserved concurrency,
// open to everyone through the URL only (both permissions a public URL
// needs), the gateway's tasks run in it, its OAuth audience its own, and
// its URL an output; the API's gateway function keeps its 29 s.
func TestStreamed(t *testing.T) {
	base := func(t *testing.T) Config {
		cfg, err := LoadConfig("config.example.json")
		if err != nil {
			t.Fatal(err)
		}
		cfg.ServersFile = ""
		return cfg
	}
	t.Run("off", func(t *testing.T) {
		r := synth(t, base(t), nil)
		if n := len(r.resources("AWS::Lambda::Url")); n != 0 {
			t.Errorf("%d Function URLs without the streamed option", n)
		}
		if id := firstID(r, "AWS::Lambda::Function", "GatewayStream"); id != "" {
			t.Errorf("function %s without the streamed option", id)
		}
		if _, ok := r.doc["Outputs"].(map[string]any)["McpStreamUrl"]; ok {
			t.Error("output McpStreamUrl without the streamed option")
		}
		if v, ok := envOf(r.function(t, "GatewayFunction"))["TOOL_RAG_GATEWAY_FUNCTION"]; ok {
			t.Errorf("the gateway runs its tasks in %s, want itself", js(v))
		}
		for id, p := range r.resources("AWS::Lambda::Permission") {
			if p["Principal"] == "*" {
				t.Errorf("permission %s opens a function to everyone: %s", id, js(p))
			}
		}
	})

	t.Run("on", func(t *testing.T) {
		cfg := base(t)
		if err := cfg.applyContext(func(k string) (string, bool) { return "true", k == "streamed" }); err != nil {
			t.Fatal(err)
		}
		cfg.OAuth = &OAuthConfig{Issuer: "https://login.example.com", Audience: "https://api.example.com/mcp",
			Grants: json.RawMessage(`[{"match":{"scope":"tools"},"servers":{"echo":{}}}]`)}
		cfg.Streamed.OAuthAudience = "https://stream.example.com/mcp"
		r := synth(t, cfg, nil)
		gwID := firstID(r, "AWS::Lambda::Function", "GatewayFunction")
		streamID := firstID(r, "AWS::Lambda::Function", "GatewayStreamFunction")
		if streamID == "" {
			t.Fatal("no GatewayStreamFunction")
		}
		gw, stream := r.resources("AWS::Lambda::Function")[gwID], r.resources("AWS::Lambda::Function")[streamID]

		urls := r.resources("AWS::Lambda::Url")
		if len(urls) != 1 {
			t.Fatalf("%d Function URLs, want 1", len(urls))
		}
		for id, u := range urls {
			if u["AuthType"] != "NONE" || u["InvokeMode"] != "RESPONSE_STREAM" || !strings.Contains(js(u["TargetFunctionArn"]), streamID) {
				t.Errorf("%s: %s, want AuthType NONE, InvokeMode RESPONSE_STREAM on %s", id, js(u), streamID)
			}
		}
		var invokeURL, invoke bool
		for id, p := range r.resources("AWS::Lambda::Permission") {
			if p["Principal"] != "*" {
				continue
			}
			if !strings.Contains(js(p["FunctionName"]), streamID) {
				t.Errorf("permission %s opens %s to everyone", id, js(p["FunctionName"]))
				continue
			}
			switch p["Action"] {
			case "lambda:InvokeFunctionUrl":
				invokeURL = p["FunctionUrlAuthType"] == "NONE"
			case "lambda:InvokeFunction":
				invoke = p["InvokedViaFunctionUrl"] == true
				if !invoke {
					t.Errorf("permission %s lets everyone invoke %s directly: %s", id, streamID, js(p))
				}
			default:
				t.Errorf("permission %s: %s", id, js(p))
			}
		}
		if !invokeURL || !invoke {
			t.Errorf("public URL permissions: InvokeFunctionUrl (auth NONE) %v, InvokeFunction via the URL %v; a NONE URL needs both", invokeURL, invoke)
		}

		if js(stream["Role"]) != js(gw["Role"]) || js(stream["Code"]) != js(gw["Code"]) {
			t.Errorf("role %s code %s, want the gateway's %s %s", js(stream["Role"]), js(stream["Code"]), js(gw["Role"]), js(gw["Code"]))
		}
		if stream["Timeout"] != 900.0 || stream["ReservedConcurrentExecutions"] != 20.0 || stream["MemorySize"] != gw["MemorySize"] {
			t.Errorf("streamed function: timeout %v, reserved concurrency %v, memory %v; want 900, 20, the gateway's %v",
				stream["Timeout"], stream["ReservedConcurrentExecutions"], stream["MemorySize"], gw["MemorySize"])
		}
		if gw["Timeout"] != 29.0 {
			t.Errorf("gateway function timeout %v, want 29 (API Gateway's route)", gw["Timeout"])
		}
		gwEnv, streamEnv := envOf(gw), envOf(stream)
		own := map[string]string{
			"TOOL_RAG_FUNCTION_URL": `"1"`, "MCP_GATEWAY_UPSTREAM_TIMEOUT": `"896"`,
			"TOOLRAG_OAUTH_AUDIENCE": `"https://stream.example.com/mcp"`,
		}
		for k, want := range own {
			if got := js(streamEnv[k]); got != want {
				t.Errorf("streamed function: %s=%s, want %s", k, got, want)
			}
		}
		for k, v := range gwEnv {
			if _, differs := own[k]; !differs && k != "TOOL_RAG_GATEWAY_FUNCTION" && js(streamEnv[k]) != js(v) {
				t.Errorf("streamed function: %s=%s, the gateway's is %s", k, js(streamEnv[k]), js(v))
			}
		}
		for _, k := range []string{"TOOL_RAG_FUNCTION_URL_MODE", "MCP_GATEWAY_PUBLIC_URL", "TOOL_RAG_GATEWAY_FUNCTION"} {
			if v, ok := streamEnv[k]; ok {
				t.Errorf("streamed function: %s=%s (it streams, names the URL it is called at, runs tasks itself)", k, js(v))
			}
		}
		if got := js(gwEnv["TOOLRAG_OAUTH_AUDIENCE"]); got != `"https://api.example.com/mcp"` {
			t.Errorf("gateway audience %s", got)
		}
		if got := js(gwEnv["TOOL_RAG_GATEWAY_FUNCTION"]); !strings.Contains(got, streamID) {
			t.Errorf("the gateway runs its tasks in %s, want %s (15 minutes)", got, streamID)
		}
		selfInvoke := false
		for _, st := range statements(r) {
			if strings.HasPrefix(st["_owner"].(string), "GatewaySelfInvoke") {
				selfInvoke = strings.Contains(js(st["Resource"]), streamID) && !strings.Contains(js(st["Resource"]), gwID)
			}
		}
		if !selfInvoke {
			t.Errorf("the gateway may not invoke %s for its tasks (or may invoke itself)", streamID)
		}
		out, ok := r.doc["Outputs"].(map[string]any)["McpStreamUrl"].(map[string]any)
		if !ok || !strings.Contains(js(out["Value"]), "FunctionUrl") || !strings.Contains(js(out["Value"]), `"mcp"`) {
			t.Errorf("output McpStreamUrl: %s", js(out))
		}
	})
}
