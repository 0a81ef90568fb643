package samtemplate

import (
	"strings"
	"testing"
)

// TestStreamed checks the SAM stack's streamed front door: everything it
// adds is under the Streamed condition (absent when StreamedFrontDoor is
// false, the default): a second function with the gateway's code, role
// and environment, 900 s and its own reserved concurrency, a Function URL
// in RESPONSE_STREAM mode with AuthType NONE, the two permissions a public
// URL needs (InvokeFunction only through the URL), the McpStreamUrl
// output; the gateway runs its tasks there and may invoke it.
func TestStreamed(t *testing.T) {
	tmpl := load(t)
	p, _ := tmpl.Parameters["StreamedFrontDoor"].(map[string]any)
	if p["Default"] != "false" || js(p["AllowedValues"]) != `["true","false"]` {
		t.Errorf("parameter StreamedFrontDoor: %s, want off by default", js(p))
	}
	if c := js(tmpl.Conditions["Streamed"]); c != `{"Fn::Equals":[{"Ref":"StreamedFrontDoor"},"true"]}` {
		t.Errorf("condition Streamed: %s", c)
	}
	want := map[string]string{
		"GatewayStreamFunction": "AWS::Serverless::Function", "GatewayStreamUrl": "AWS::Lambda::Url",
		"GatewayStreamUrlPermission": "AWS::Lambda::Permission", "GatewayStreamInvokePermission": "AWS::Lambda::Permission",
		"GatewayStreamLogs": "AWS::Logs::LogGroup",
	}
	for id := range tmpl.Resources {
		if strings.HasPrefix(id, "GatewayStream") && want[id] == "" {
			t.Errorf("%s is not checked here", id)
		}
	}
	for id, typ := range want {
		if r := tmpl.Resources[id]; r.Type != typ || r.Condition != "Streamed" {
			t.Errorf("%s: %s under condition %q, want %s under Streamed", id, r.Type, r.Condition, typ)
		}
	}
	if o, _ := tmpl.Outputs["McpStreamUrl"].(map[string]any); o["Condition"] != "Streamed" || !strings.Contains(js(o["Value"]), "${GatewayStreamUrl.FunctionUrl}mcp") {
		t.Errorf("output McpStreamUrl: %s", js(o))
	}

	url := tmpl.Resources["GatewayStreamUrl"].Properties
	if url["AuthType"] != "NONE" || url["InvokeMode"] != "RESPONSE_STREAM" || js(url["TargetFunctionArn"]) != `{"Fn::GetAtt":["GatewayStreamFunction","Arn"]}` {
		t.Errorf("GatewayStreamUrl: %s", js(url))
	}
	perms := map[string]string{
		"GatewayStreamUrlPermission":    `{"Action":"lambda:InvokeFunctionUrl","FunctionName":{"Ref":"GatewayStreamFunction"},"FunctionUrlAuthType":"NONE","Principal":"*"}`,
		"GatewayStreamInvokePermission": `{"Action":"lambda:InvokeFunction","FunctionName":{"Ref":"GatewayStreamFunction"},"InvokedViaFunctionUrl":true,"Principal":"*"}`,
	}
	for id, w := range perms {
		if got := js(tmpl.Resources[id].Properties); got != w {
			t.Errorf("%s: %s, want %s", id, got, w)
		}
	}
	for id, r := range tmpl.Resources {
		if r.Type == "AWS::Lambda::Permission" && r.Properties["Principal"] == "*" && perms[id] == "" {
			t.Errorf("%s opens a function to everyone: %s", id, js(r.Properties))
		}
	}

	var gw Function
	for _, f := range tmpl.Functions() {
		if f.Name() == "gateway" {
			gw = f
		}
	}
	stream, ok := tmpl.Function("GatewayStreamFunction")
	if !ok {
		t.Fatal("no GatewayStreamFunction")
	}
	props := tmpl.Resources["GatewayStreamFunction"].Properties
	if stream.CodeURI != gw.CodeURI || js(props["Role"]) != `{"Fn::GetAtt":["GatewayFunctionRole","Arn"]}` || props["Policies"] != nil {
		t.Errorf("streamed function: code %s role %s policies %s, want the gateway's code and role", stream.CodeURI, js(props["Role"]), js(props["Policies"]))
	}
	if stream.Timeout != 900 || js(stream.MemorySize) != js(gw.MemorySize) || len(stream.Events) != 0 {
		t.Errorf("streamed function: timeout %v memory %s events %d, want 900, the gateway's, none", stream.Timeout, js(stream.MemorySize), len(stream.Events))
	}
	if rc := js(props["ReservedConcurrentExecutions"]); rc != `{"Fn::If":["ReserveStreamConcurrency",{"Ref":"StreamedReservedConcurrency"},{"Ref":"AWS::NoValue"}]}` {
		t.Errorf("streamed function reserved concurrency %s", rc)
	}
	own := map[string]string{
		"TOOL_RAG_FUNCTION_URL": `"1"`, "MCP_GATEWAY_UPSTREAM_TIMEOUT": `"896"`,
		"TOOLRAG_OAUTH_AUDIENCE": `{"Fn::If":["StreamedOwnAudience",{"Ref":"StreamedOAuthAudience"},{"Ref":"OAuthAudience"}]}`,
	}
	for k, w := range own {
		if got := js(stream.Env[k]); got != w {
			t.Errorf("streamed function %s = %s, want %s", k, got, w)
		}
	}
	for k, v := range gw.Env {
		if _, differs := own[k]; !differs && k != "TOOL_RAG_GATEWAY_FUNCTION" && js(stream.Env[k]) != js(v) {
			t.Errorf("streamed function %s = %s, the gateway's is %s", k, js(stream.Env[k]), js(v))
		}
	}
	for _, k := range []string{"TOOL_RAG_FUNCTION_URL_MODE", "MCP_GATEWAY_PUBLIC_URL", "TOOL_RAG_GATEWAY_FUNCTION"} {
		if v, ok := stream.Env[k]; ok {
			t.Errorf("streamed function %s = %s (it streams, names the URL it is called at, runs tasks itself)", k, js(v))
		}
	}
	if got := js(gw.Env["TOOL_RAG_GATEWAY_FUNCTION"]); got != `{"Fn::If":["Streamed",{"Ref":"GatewayStreamFunction"},{"Ref":"AWS::NoValue"}]}` {
		t.Errorf("gateway TOOL_RAG_GATEWAY_FUNCTION = %s, want the streamed function when there is one", got)
	}
	if pol := js(tmpl.Resources["GatewayFunction"].Properties["Policies"]); !strings.Contains(pol, `function:${AWS::StackName}-GatewayStreamFunction-*`) {
		t.Error("the gateway may not invoke the streamed function for its tasks")
	}
}
