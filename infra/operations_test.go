package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// TestOperations: the sync function runs one at a time and its failed
// asynchronous invokes land in an SQS dead-letter queue; alarms on
// errors, throttles, sync failures and index staleness notify one SNS
// topic; the HTTP API writes an access log; the gateway's upstream
// timeout and result limit fit Lambda's limits.
func TestOperations(t *testing.T) {
	cfg, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServersFile = ""
	r := synth(t, cfg, nil)

	if rc := js(r.function(t, "SyncFunction")["ReservedConcurrentExecutions"]); rc != "1" {
		t.Errorf("sync ReservedConcurrentExecutions = %s, want 1", rc)
	}
	if rc := js(r.function(t, "GatewayFunction")["ReservedConcurrentExecutions"]); rc != "100" {
		t.Errorf("gateway ReservedConcurrentExecutions = %s, want the default 100", rc)
	}
	if _, ok := r.function(t, "HealthFunction")["ReservedConcurrentExecutions"]; ok {
		t.Error("the health function has reserved concurrency")
	}

	queues := r.resources("AWS::SQS::Queue")
	if len(queues) != 1 {
		t.Fatalf("%d SQS queues, want the sync dead-letter queue", len(queues))
	}
	qid := firstID(r, "AWS::SQS::Queue", "SyncDeadLetterQueue")
	eic := r.resources("AWS::Lambda::EventInvokeConfig")
	if len(eic) != 1 {
		t.Fatalf("%d EventInvokeConfigs, want 1 (sync)", len(eic))
	}
	for _, p := range eic {
		if !strings.Contains(js(p["FunctionName"]), "SyncFunction") || !strings.Contains(js(p["DestinationConfig"]), qid) || js(p["MaximumRetryAttempts"]) != "2" {
			t.Errorf("EventInvokeConfig %s: want the sync function, OnFailure to %s, 2 retries", js(p), qid)
		}
	}

	checkAlarms(t, r, "GatewayFunction")
	checkDashboard(t, r)
	r.tmpl.HasOutput(jsii.String("AlarmTopicArn"), &map[string]any{})

	var stage map[string]any
	for _, p := range r.resources("AWS::ApiGatewayV2::Stage") {
		stage = p
	}
	als, _ := stage["AccessLogSettings"].(map[string]any)
	if als == nil || !strings.Contains(js(als["DestinationArn"]), "ApiAccessLogs") || !strings.Contains(js(als["Format"]), "$context.requestId") {
		t.Errorf("stage AccessLogSettings = %s, want the ApiAccessLogs group and a format with the request id", js(als))
	}
	if strings.Contains(strings.ToLower(js(als["Format"])), "authorization") {
		t.Error("the access log format logs the Authorization header")
	}

	env := envOf(r.function(t, "GatewayFunction"))
	if env["MCP_GATEWAY_UPSTREAM_TIMEOUT"] != "25" || env["MCP_GATEWAY_MAX_RESULT_BYTES"] != "2097152" {
		t.Errorf("gateway env: upstream timeout %v, max result bytes %v; want 25 (29 s function) and 2097152", env["MCP_GATEWAY_UPSTREAM_TIMEOUT"], env["MCP_GATEWAY_MAX_RESULT_BYTES"])
	}

	// The sync function stores surfaces with UpdateItem on the registry.
	ok := false
	for _, st := range statements(r) {
		if strings.Contains(js(st["_owner"]), "Sync") && strings.Contains(js(st["Action"]), "dynamodb:UpdateItem") && strings.Contains(js(st["Resource"]), "RegistryTable") {
			ok = true
		}
	}
	if !ok {
		t.Error("the sync function may not UpdateItem the registry table (it stores prompts and resources there)")
	}

	// No schedule: no staleness alarm (it would always fire).
	cfg.SyncSchedule = "off"
	r = synth(t, cfg, nil)
	for id := range r.resources("AWS::CloudWatch::Alarm") {
		if strings.HasPrefix(id, "IndexStalenessAlarm") {
			t.Error("staleness alarm without a sync schedule")
		}
	}
}

// checkAlarms finds every alarm of Alarms in the template, on its metric,
// statistic, threshold and dimension, notifying the AlarmTopic, and no
// other alarm.
func checkAlarms(t *testing.T, r synthResult, gatewayID string) {
	t.Helper()
	alarms := r.resources("AWS::CloudWatch::Alarm")
	n := 0
	for _, want := range Alarms {
		id := firstID(r, "AWS::CloudWatch::Alarm", want.ID)
		p := alarms[id]
		if p == nil {
			t.Errorf("no %s", want.ID)
			continue
		}
		n++
		metric := want.Metric
		if want.Dimension == "api" && r.g.RestApi != nil && restMetricNames[metric] != "" {
			metric = restMetricNames[metric]
		}
		stat, _ := p["Statistic"].(string)
		if stat == "" {
			stat, _ = p["ExtendedStatistic"].(string)
		}
		if p["Namespace"] != want.Namespace || p["MetricName"] != metric || stat != want.Statistic || js(p["Threshold"]) != js(want.Threshold) {
			t.Errorf("%s: %s/%s %s threshold %v; want %s/%s %s %v", id, p["Namespace"], p["MetricName"], stat, p["Threshold"], want.Namespace, metric, want.Statistic, want.Threshold)
		}
		if !strings.Contains(js(p["AlarmActions"]), "AlarmTopic") {
			t.Errorf("alarm %s does not notify the AlarmTopic: %s", id, js(p["AlarmActions"]))
		}
		dims := js(p["Dimensions"])
		switch want.Dimension {
		case "gateway":
			if !strings.Contains(dims, gatewayID) {
				t.Errorf("%s: dimensions %s do not name the gateway function", id, dims)
			}
		case "api":
			if r.g.RestApi == nil && (!strings.Contains(dims, `"ApiId"`) || !strings.Contains(dims, `"$default"`)) {
				t.Errorf("%s: dimensions %s, want the HTTP API's id and stage", id, dims)
			}
			if r.g.RestApi != nil && !strings.Contains(dims, `"ApiName"`) {
				t.Errorf("%s: dimensions %s, want the REST API's name", id, dims)
			}
		}
		if want.ID == "IndexStalenessAlarm" && (p["TreatMissingData"] != "breaching" || p["ComparisonOperator"] != "LessThanThreshold") {
			t.Errorf("staleness alarm: %s; no data must count as stale", js(p))
		}
	}
	if len(alarms) != n {
		t.Errorf("%d alarms, want %d", len(alarms), n)
	}
}

// checkDashboard: one dashboard with calls, errors by kind, latency p50
// and p99, cold starts, index age, catalog size and sync outcome.
func checkDashboard(t *testing.T, r synthResult) {
	t.Helper()
	ds := r.resources("AWS::CloudWatch::Dashboard")
	if len(ds) != 1 {
		t.Fatalf("%d dashboards, want 1", len(ds))
	}
	for _, d := range ds {
		body := js(d["DashboardBody"])
		for _, w := range []string{`\"Count\"`, "mcp_tool_calls_total", "auth_lookup_errors_total", "session_store_errors_total",
			"rate_limit_store_errors_total", "mcp_tool_call_errors_total", `\"p50\"`, `\"p99\"`, "initDurationMs", "index_age_seconds",
			"tools_in_index", "sync_successes_total", "sync_failures_total", "upstreams_down", "alarm"} {
			if !strings.Contains(body, w) {
				t.Errorf("the dashboard lacks %s", w)
			}
		}
	}
}
