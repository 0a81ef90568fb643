package samtemplate

import (
	"strconv"
	"strings"
	"testing"
)

// TestOperations: the SAM template has what the CDK app has for running
// in a real account (infra/operations.go): sync reserved concurrency 1
// with a dead-letter queue for failed async invokes, the alarms, the
// HTTP API access log, and the gateway's Lambda-limit settings.
func TestOperations(t *testing.T) {
	tmpl := load(t)
	byName := map[string]Function{}
	for _, f := range tmpl.Functions() {
		byName[f.Name()] = f
	}
	sync := tmpl.Resources[byName["sync"].LogicalID].Properties
	if js(sync["ReservedConcurrentExecutions"]) != "1" {
		t.Errorf("sync ReservedConcurrentExecutions = %s, want 1", js(sync["ReservedConcurrentExecutions"]))
	}
	eic, _ := sync["EventInvokeConfig"].(map[string]any)
	if !strings.Contains(js(eic), `"Type":"SQS"`) || !strings.Contains(js(eic), `"Fn::GetAtt":["SyncDeadLetterQueue","Arn"]`) {
		t.Errorf("sync EventInvokeConfig = %s, want OnFailure to the SyncDeadLetterQueue", js(eic))
	}
	if q, ok := tmpl.Resources["SyncDeadLetterQueue"]; !ok || q.Type != "AWS::SQS::Queue" {
		t.Error("no SyncDeadLetterQueue")
	}
	if !strings.Contains(js(sync["Policies"]), `"dynamodb:UpdateItem"`) {
		t.Error("sync may not UpdateItem the registry (it stores prompts and resources there)")
	}

	gw := byName["gateway"]
	to, _ := strconv.Atoi(js(gw.Env["MCP_GATEWAY_UPSTREAM_TIMEOUT"])[1:3])
	timeout, _ := strconv.Atoi(js(tmpl.Resources[gw.LogicalID].Properties["Timeout"]))
	if to <= 0 || to >= timeout || gw.Env["MCP_GATEWAY_MAX_RESULT_BYTES"] != "2097152" {
		t.Errorf("gateway: MCP_GATEWAY_UPSTREAM_TIMEOUT %v (function timeout %d), MCP_GATEWAY_MAX_RESULT_BYTES %v", gw.Env["MCP_GATEWAY_UPSTREAM_TIMEOUT"], timeout, gw.Env["MCP_GATEWAY_MAX_RESULT_BYTES"])
	}

	api := tmpl.Resources["GatewayApi"].Properties
	als, _ := api["AccessLogSettings"].(map[string]any)
	if js(als["DestinationArn"]) != `{"Fn::GetAtt":["ApiAccessLogs","Arn"]}` || !strings.Contains(js(als["Format"]), "$context.requestId") {
		t.Errorf("GatewayApi AccessLogSettings = %s", js(als))
	}

	want := map[string]string{
		"GatewayErrorsAlarm": "Errors", "GatewayThrottlesAlarm": "Throttles", "SyncErrorsAlarm": "Errors",
		"HealthErrorsAlarm": "Errors", "SyncDeadLettersAlarm": "ApproximateNumberOfMessagesVisible",
		"SyncFailuresAlarm": "sync_failures_total", "IndexStalenessAlarm": "sync_successes_total",
		"ApiServerErrorsAlarm": `{"Fn::If":["RestWaf","5XXError","5xx"]}`, "ApiLatencyAlarm": "Latency",
		"GatewayAuthUnavailableAlarm": "auth_lookup_errors_total", "GatewaySessionStoreAlarm": "session_store_errors_total",
		"GatewayStoreErrorsAlarm": "rate_limit_store_errors_total", "GatewayUpstreamFailuresAlarm": "mcp_tool_call_errors_total",
		"UpstreamsDownAlarm": "upstreams_down",
	}
	n := 0
	for id, r := range tmpl.Resources {
		if r.Type != "AWS::CloudWatch::Alarm" {
			continue
		}
		n++
		metric, ok := r.Properties["MetricName"].(string)
		if !ok {
			metric = js(r.Properties["MetricName"])
		}
		if want[id] == "" || metric != want[id] {
			t.Errorf("alarm %s watches %v", id, r.Properties["MetricName"])
		}
		if js(r.Properties["AlarmActions"]) != `[{"Ref":"AlarmTopic"}]` {
			t.Errorf("alarm %s does not notify AlarmTopic", id)
		}
	}
	if n != len(want) {
		t.Errorf("%d alarms, want %d", n, len(want))
	}
	if _, ok := tmpl.Outputs["AlarmTopicArn"]; !ok {
		t.Error("no AlarmTopicArn output")
	}
}
