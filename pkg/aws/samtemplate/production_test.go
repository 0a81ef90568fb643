package samtemplate

import (
	"strings"
	"testing"
)

// TestProduction: the SAM template has the CDK app's production items
// (infra/operations.go, infra/frontdoor.go): the alarms on the front
// door's 5xx rate and latency and on the gateway's EMF counters of
// handled failures, one dashboard, the gateway's reserved concurrency,
// stage and route throttling, and the optional REST API + WAF front door.
// (SAM deploys no Fargate servers: their hardening is the CDK app's.)
func TestProduction(t *testing.T) {
	tmpl := load(t)
	res := func(id, typ string) map[string]any {
		t.Helper()
		r, ok := tmpl.Resources[id]
		if !ok || r.Type != typ {
			t.Fatalf("no %s %s", typ, id)
		}
		return r.Properties
	}
	for id, want := range map[string]struct{ metric, stat, dim string }{
		"ApiServerErrorsAlarm":         {`{"Fn::If":["RestWaf","5XXError","5xx"]}`, "Average", "ApiId"},
		"ApiLatencyAlarm":              {`"Latency"`, "p99", "ApiId"},
		"GatewayAuthUnavailableAlarm":  {`"auth_lookup_errors_total"`, "Sum", "GatewayFunction"},
		"GatewaySessionStoreAlarm":     {`"session_store_errors_total"`, "Sum", "GatewayFunction"},
		"GatewayStoreErrorsAlarm":      {`"rate_limit_store_errors_total"`, "Sum", "GatewayFunction"},
		"GatewayUpstreamFailuresAlarm": {`"mcp_tool_call_errors_total"`, "Sum", "GatewayFunction"},
		"UpstreamsDownAlarm":           {`"upstreams_down"`, "Maximum", "HealthFunction"},
	} {
		p := res(id, "AWS::CloudWatch::Alarm")
		stat, _ := p["Statistic"].(string)
		if stat == "" {
			stat, _ = p["ExtendedStatistic"].(string)
		}
		if js(p["MetricName"]) != want.metric || stat != want.stat || !strings.Contains(js(p["Dimensions"]), want.dim) {
			t.Errorf("%s: %s %s %s; want %s %s on %s", id, js(p["MetricName"]), stat, js(p["Dimensions"]), want.metric, want.stat, want.dim)
		}
		if js(p["AlarmActions"]) != `[{"Ref":"AlarmTopic"}]` {
			t.Errorf("alarm %s does not notify AlarmTopic", id)
		}
	}
	body := js(res("Dashboard", "AWS::CloudWatch::Dashboard")["DashboardBody"])
	for _, w := range []string{`\"Count\"`, "mcp_tool_calls_total", "auth_lookup_errors_total", "session_store_errors_total",
		"rate_limit_store_errors_total", "mcp_tool_call_errors_total", `\"p50\"`, `\"p99\"`, "initDurationMs", "index_age_seconds",
		"tools_in_index", "sync_successes_total", "sync_failures_total", "upstreams_down", "ApiServerErrorsAlarm.Arn"} {
		if !strings.Contains(body, w) {
			t.Errorf("the dashboard lacks %s", w)
		}
	}

	gw := res("GatewayFunction", "AWS::Serverless::Function")
	if js(gw["ReservedConcurrentExecutions"]) != `{"Fn::If":["ReserveGatewayConcurrency",{"Ref":"GatewayReservedConcurrency"},{"Ref":"AWS::NoValue"}]}` {
		t.Errorf("gateway ReservedConcurrentExecutions = %s", js(gw["ReservedConcurrentExecutions"]))
	}
	if p, _ := tmpl.Parameters["GatewayReservedConcurrency"].(map[string]any); p["Default"] != 100 {
		t.Errorf("GatewayReservedConcurrency default %v, want 100", p["Default"])
	}

	api := res("GatewayApi", "AWS::Serverless::HttpApi")
	if js(api["DefaultRouteSettings"]) != `{"ThrottlingBurstLimit":100,"ThrottlingRateLimit":50}` {
		t.Errorf("stage throttling %s", js(api["DefaultRouteSettings"]))
	}
	rs, _ := api["RouteSettings"].(map[string]any)
	for _, route := range []string{"POST /register", "GET /.well-known/oauth-protected-resource", "GET /health", "GET /console/{proxy+}"} {
		if js(rs[route]) != `{"ThrottlingBurstLimit":20,"ThrottlingRateLimit":10}` {
			t.Errorf("route %s throttling %s", route, js(rs[route]))
		}
	}
	if js(api["DisableExecuteApiEndpoint"]) != `{"Fn::If":["RestWaf",true,false]}` {
		t.Errorf("the HTTP API stays reachable beside the WAF front door: %s", js(api["DisableExecuteApiEndpoint"]))
	}

	acl := res("WebAcl", "AWS::WAFv2::WebACL")
	rules := js(acl["Rules"])
	for _, w := range []string{`"RateBasedStatement":{"AggregateKeyType":"IP","Limit":{"Ref":"WafRateLimit"}}`, `"Name":"AWSManagedRulesCommonRuleSet"`,
		`{"ActionToUse":{"Count":{}},"Name":"SizeRestrictions_BODY"}`} {
		if !strings.Contains(rules, w) {
			t.Errorf("web ACL rules lack %s: %s", w, rules)
		}
	}
	assoc := res("WebAclAssociation", "AWS::WAFv2::WebACLAssociation")
	if !strings.Contains(js(assoc["ResourceArn"]), "RestApiStage") || js(assoc["WebACLArn"]) != `{"Fn::GetAtt":["WebAcl","Arn"]}` {
		t.Errorf("web ACL association %s", js(assoc))
	}
	stage := res("RestApiStage", "AWS::ApiGateway::Stage")
	if ms := js(stage["MethodSettings"]); !strings.Contains(ms, `"ThrottlingBurstLimit":100`) || !strings.Contains(ms, `"ThrottlingRateLimit":50`) {
		t.Errorf("REST stage throttling %s", ms)
	}
	for _, id := range []string{"RestApi", "RestApiProxy", "RestApiRootMethod", "RestApiProxyMethod", "RestApiDeployment", "RestApiStage", "RestApiInvokePermission", "WebAcl", "WebAclAssociation"} {
		if tmpl.Resources[id].Condition != "RestWaf" {
			t.Errorf("%s is not conditional on RestWaf", id)
		}
	}
}
