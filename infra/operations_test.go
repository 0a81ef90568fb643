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
	for _, name := range []string{"GatewayFunction", "HealthFunction"} {
		if _, ok := r.function(t, name)["ReservedConcurrentExecutions"]; ok {
			t.Errorf("%s has reserved concurrency", name)
		}
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

	alarms := map[string]map[string]any{}
	for id, p := range r.resources("AWS::CloudWatch::Alarm") {
		alarms[id] = p
		if !strings.Contains(js(p["AlarmActions"]), "AlarmTopic") {
			t.Errorf("alarm %s does not notify the AlarmTopic: %s", id, js(p["AlarmActions"]))
		}
	}
	want := map[string]string{
		"GatewayErrorsAlarm": "Errors", "GatewayThrottlesAlarm": "Throttles", "SyncErrorsAlarm": "Errors",
		"HealthErrorsAlarm": "Errors", "SyncDeadLettersAlarm": "ApproximateNumberOfMessagesVisible",
		"SyncFailuresAlarm": "sync_failures_total", "IndexStalenessAlarm": "sync_successes_total",
	}
	for prefix, metric := range want {
		found := false
		for id, p := range alarms {
			if strings.HasPrefix(id, prefix) {
				found = true
				if p["MetricName"] != metric {
					t.Errorf("%s watches %v, want %s", id, p["MetricName"], metric)
				}
				if prefix == "IndexStalenessAlarm" && (p["TreatMissingData"] != "breaching" || p["ComparisonOperator"] != "LessThanThreshold") {
					t.Errorf("staleness alarm: %s; no data must count as stale", js(p))
				}
			}
		}
		if !found {
			t.Errorf("no %s", prefix)
		}
	}
	if len(alarms) != len(want) {
		t.Errorf("%d alarms, want %d", len(alarms), len(want))
	}
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
