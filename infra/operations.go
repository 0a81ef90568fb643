package main

import (
	"strconv"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsapigatewayv2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatch"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscloudwatchactions"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambdadestinations"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssns"
	"github.com/aws/aws-cdk-go/awscdk/v2/awssqs"
	"github.com/aws/aws-cdk-go/awscdk/v2/interfaces/interfacesawscloudwatch"
	"github.com/aws/jsii-runtime-go"
)

// MaxResultBytes is MCP_GATEWAY_MAX_RESULT_BYTES on Lambda: a result is
// JSON-escaped twice on its way out (the SSE message, then the Lambda
// payload), so 2 MiB of upstream result fits the 6 MB response payload in
// all but pathological cases (the gateway checks the encoded response
// anyway and answers a tool error past 6 MB).
const MaxResultBytes = 2 << 20

// upstreamMarginSeconds is what the gateway's upstream call timeout leaves
// of the function timeout (the gateway also stops each call 2 s before
// the invocation deadline).
const upstreamMarginSeconds = 4

// lambdaLimitsEnv is the gateway's environment that keeps it inside
// Lambda's limits: the upstream call timeout under the function timeout
// (the 60 s default would outlive the 29 s function) and the result limit
// under the 6 MB payload.
func lambdaLimitsEnv(timeoutSeconds int) map[string]string {
	upstream := max(timeoutSeconds-upstreamMarginSeconds, 1)
	return map[string]string{
		"MCP_GATEWAY_UPSTREAM_TIMEOUT": strconv.Itoa(upstream),
		"MCP_GATEWAY_MAX_RESULT_BYTES": strconv.Itoa(MaxResultBytes),
	}
}

// accessLogFormat is one JSON line per request (no headers, so never a
// key).
const accessLogFormat = `{"requestId":"$context.requestId","ip":"$context.identity.sourceIp","requestTime":"$context.requestTime",` +
	`"method":"$context.httpMethod","path":"$context.path","status":"$context.status","protocol":"$context.protocol",` +
	`"responseLength":"$context.responseLength","latencyMs":"$context.responseLatency",` +
	`"integrationLatencyMs":"$context.integration.latency","integrationStatus":"$context.integrationStatus",` +
	`"integrationError":"$context.integrationErrorMessage","error":"$context.error.message"}`

// addAccessLogs writes the HTTP API's access log to its own log group.
func addAccessLogs(stack awscdk.Stack, stage awsapigatewayv2.HttpStage, retention awslogs.RetentionDays) {
	lg := awslogs.NewLogGroup(stack, jsii.String("ApiAccessLogs"), &awslogs.LogGroupProps{
		Retention: retention, RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	cfn := stage.Node().DefaultChild().(awsapigatewayv2.CfnStage)
	cfn.SetAccessLogSettings(&awsapigatewayv2.CfnStage_AccessLogSettingsProperty{
		DestinationArn: lg.LogGroupArn(), Format: jsii.String(accessLogFormat),
	})
}

// Alarm is one CloudWatch alarm of the stacks: its logical id (the same
// in the CDK app and template.yaml), the metric it reads and the threshold.
// Alarms lists them all; the tests hold both stacks to it.
type Alarm struct {
	ID, Namespace, Metric, Statistic string
	// Function is "gateway", "sync" or "health" for a metric with the
	// FunctionName dimension; "api" for the front door's; "queue" for the
	// dead-letter queue's.
	Dimension                  string
	Threshold                  float64
	PeriodSeconds              int
	EvaluationPeriods, ToAlarm int
	LessThan, MissingBreaching bool
	Description                string
}

// The front door's metric names (HTTP API; the REST API's are
// restMetricNames).
const (
	apiServerErrors = "5xx"
	apiLatency      = "Latency"
)

var restMetricNames = map[string]string{"5xx": "5XXError", "4xx": "4XXError"}

// Alarms are the stacks' alarms. Those on the functions' own EMF counters
// (namespace ToolRAG, dimension FunctionName) see the failures the gateway
// handles itself: a DynamoDB outage is answered 503 with Retry-After and
// an upstream failure is a tool error, neither of which is a Lambda error.
var Alarms = []Alarm{
	{ID: "GatewayErrorsAlarm", Namespace: "AWS/Lambda", Metric: "Errors", Statistic: "Sum", Dimension: "gateway", Threshold: 1,
		Description: "toolrag gateway: invocations failed (crash, timeout or out of memory)"},
	{ID: "GatewayThrottlesAlarm", Namespace: "AWS/Lambda", Metric: "Throttles", Statistic: "Sum", Dimension: "gateway", Threshold: 1,
		Description: "toolrag gateway: invocations throttled (its reserved concurrency or the account's limit)"},
	{ID: "SyncErrorsAlarm", Namespace: "AWS/Lambda", Metric: "Errors", Statistic: "Sum", Dimension: "sync", Threshold: 1,
		Description: "toolrag sync: runs failed (registry, tools table or index build)"},
	{ID: "HealthErrorsAlarm", Namespace: "AWS/Lambda", Metric: "Errors", Statistic: "Sum", Dimension: "health", Threshold: 1,
		Description: "toolrag health: probe rounds failed (registry not writable)"},
	{ID: "SyncDeadLettersAlarm", Namespace: "AWS/SQS", Metric: "ApproximateNumberOfMessagesVisible", Statistic: "Maximum", Dimension: "queue", Threshold: 1,
		Description: "toolrag sync: an asynchronous sync (schedule or reindex) failed every attempt; its event is in the dead-letter queue"},
	{ID: "SyncFailuresAlarm", Namespace: "ToolRAG", Metric: "sync_failures_total", Statistic: "Sum", Dimension: "sync", Threshold: 1,
		Description: "toolrag sync: sync_failures_total (runs that did not publish)"},
	{ID: "IndexStalenessAlarm", Namespace: "ToolRAG", Metric: "sync_successes_total", Statistic: "Sum", Dimension: "sync", Threshold: 1,
		PeriodSeconds: 3600, EvaluationPeriods: 3, LessThan: true, MissingBreaching: true,
		Description: "toolrag: no successful sync for 3 hours; the published index no longer follows the upstreams"},
	// The front door: 5xx answers (the gateway's 503s and 502s, and API
	// Gateway's own when the function fails) as a rate, and latency.
	{ID: "ApiServerErrorsAlarm", Namespace: "AWS/ApiGateway", Metric: apiServerErrors, Statistic: "Average", Dimension: "api", Threshold: 0.05,
		EvaluationPeriods: 3, ToAlarm: 2,
		Description: "toolrag API: 5 % or more of the requests answered 5xx in 2 of the last 3 five-minute periods (DynamoDB or upstream trouble the gateway answers 503/502, or failing invocations)"},
	{ID: "ApiLatencyAlarm", Namespace: "AWS/ApiGateway", Metric: apiLatency, Statistic: "p99", Dimension: "api", Threshold: 20000,
		EvaluationPeriods: 3, ToAlarm: 3,
		Description: "toolrag API: p99 latency at or above 20 s for 15 minutes (requests run into the 29 s function timeout)"},
	// The gateway's handled failures (EMF counters).
	{ID: "GatewayAuthUnavailableAlarm", Namespace: "ToolRAG", Metric: "auth_lookup_errors_total", Statistic: "Sum", Dimension: "gateway", Threshold: 1,
		Description: "toolrag gateway: the keys table did not answer a key lookup; those requests were answered 503 (auth unavailable)"},
	{ID: "GatewaySessionStoreAlarm", Namespace: "ToolRAG", Metric: "session_store_errors_total", Statistic: "Sum", Dimension: "gateway", Threshold: 1,
		Description: "toolrag gateway: the sessions table did not answer; those requests were answered 503 with Retry-After (sessions intact)"},
	{ID: "GatewayStoreErrorsAlarm", Namespace: "ToolRAG", Metric: "rate_limit_store_errors_total", Statistic: "Sum", Dimension: "gateway", Threshold: 1,
		Description: "toolrag gateway: the exact rate limit's counters in DynamoDB could not be updated"},
	{ID: "GatewayUpstreamFailuresAlarm", Namespace: "ToolRAG", Metric: "mcp_tool_call_errors_total", Statistic: "Sum", Dimension: "gateway", Threshold: 5,
		EvaluationPeriods: 2, ToAlarm: 2,
		Description: "toolrag gateway: 5 or more upstream tool calls failed in each of two five-minute periods (the clients got tool errors)"},
	{ID: "UpstreamsDownAlarm", Namespace: "ToolRAG", Metric: "upstreams_down", Statistic: "Maximum", Dimension: "health", Threshold: 1,
		EvaluationPeriods: 2, ToAlarm: 2,
		Description: "toolrag health: an upstream server failed its probes for 10 minutes; its tools are withheld"},
}

// addOperations adds what running the stack in a real account needs:
//   - a dead-letter queue for the sync function's asynchronous invokes (the
//     schedule and POST /tool-rag/reindex) that failed all their attempts;
//   - the Alarms, sent to the AlarmTopic SNS topic;
//   - one CloudWatch dashboard for the service (addDashboard).
func addOperations(stack awscdk.Stack, cfg Config, fd *frontDoor, gateway, syncFn, health awslambda.Function) {
	dlq := awssqs.NewQueue(stack, jsii.String("SyncDeadLetterQueue"), &awssqs.QueueProps{
		Encryption:      awssqs.QueueEncryption_SQS_MANAGED,
		RetentionPeriod: awscdk.Duration_Days(jsii.Number(14)),
		EnforceSSL:      jsii.Bool(true),
	})
	syncFn.ConfigureAsyncInvoke(&awslambda.EventInvokeConfigOptions{
		OnFailure:     awslambdadestinations.NewSqsDestination(dlq),
		RetryAttempts: jsii.Number(2),
		MaxEventAge:   awscdk.Duration_Hours(jsii.Number(6)),
	})

	topic := awssns.NewTopic(stack, jsii.String("AlarmTopic"), &awssns.TopicProps{
		DisplayName: jsii.String("toolrag " + cfg.Stage + " alarms"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("AlarmTopicArn"), &awscdk.CfnOutputProps{
		Value: topic.TopicArn(), Description: jsii.String("Subscribe to this SNS topic to receive the gateway's alarms"),
	})
	fns := map[string]awslambda.Function{"gateway": gateway, "sync": syncFn, "health": health}
	m := &opsMetrics{fd: fd, fns: fns, dlq: dlq}
	var alarms []awscloudwatch.IAlarm
	for _, a := range Alarms {
		if a.ID == "IndexStalenessAlarm" && cfg.SyncSchedule == "off" {
			continue // no schedule: it would always fire
		}
		period := a.PeriodSeconds
		if period == 0 {
			period = 300
		}
		evals, toAlarm := max(a.EvaluationPeriods, 1), a.ToAlarm
		if toAlarm == 0 {
			toAlarm = evals
		}
		op := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
		if a.LessThan {
			op = awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD
		}
		missing := awscloudwatch.TreatMissingData_NOT_BREACHING
		if a.MissingBreaching {
			missing = awscloudwatch.TreatMissingData_BREACHING
		}
		al := awscloudwatch.NewAlarm(stack, jsii.String(a.ID), &awscloudwatch.AlarmProps{
			Metric: m.of(a.Namespace, a.Metric, a.Statistic, a.Dimension, period), Threshold: jsii.Number(a.Threshold),
			EvaluationPeriods: jsii.Number(float64(evals)), DatapointsToAlarm: jsii.Number(float64(toAlarm)),
			ComparisonOperator: op, TreatMissingData: missing, AlarmDescription: jsii.String(a.Description),
		})
		al.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
		alarms = append(alarms, al)
	}
	addDashboard(stack, cfg, m, alarms)
}

// opsMetrics builds the metrics of the alarms and the dashboard.
type opsMetrics struct {
	fd  *frontDoor
	fns map[string]awslambda.Function
	dlq awssqs.Queue
}

// of returns the metric namespace/name of dimension (see Alarm) with the
// statistic and period.
func (m *opsMetrics) of(namespace, name, stat, dimension string, periodSeconds int) awscloudwatch.IMetric {
	period := awscdk.Duration_Seconds(jsii.Number(float64(periodSeconds)))
	if dimension == "api" {
		if m.fd.restAPI != nil && restMetricNames[name] != "" {
			name = restMetricNames[name]
		}
		return m.fd.metric(name, stat).(awscloudwatch.Metric).With(&awscloudwatch.MetricOptions{Period: period})
	}
	dims := map[string]*string{}
	switch dimension {
	case "queue":
		dims["QueueName"] = m.dlq.QueueName()
	default:
		dims["FunctionName"] = m.fns[dimension].FunctionName()
	}
	return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
		Namespace: jsii.String(namespace), MetricName: jsii.String(name), DimensionsMap: &dims,
		Statistic: jsii.String(stat), Period: period,
	})
}

// coldStartQuery counts the gateway's cold starts in its JSON log (the
// platform.report record of an invocation that initialised the runtime
// carries initDurationMs).
const coldStartQuery = `filter type = "platform.report" and ispresent(record.metrics.initDurationMs)
| stats count(*) as cold_starts, avg(record.metrics.initDurationMs) as avg_init_ms by bin(5m)`

// addDashboard adds the service's CloudWatch dashboard: calls, errors by
// kind, latency p50/p99, cold starts, index age, catalog size, sync
// outcome, upstream health, and the alarms' states.
func addDashboard(stack awscdk.Stack, cfg Config, m *opsMetrics, alarms []awscloudwatch.IAlarm) {
	graph := func(title string, left ...awscloudwatch.IMetric) awscloudwatch.IWidget {
		return awscloudwatch.NewGraphWidget(&awscloudwatch.GraphWidgetProps{
			Title: jsii.String(title), Left: &left, Width: jsii.Number(8), Height: jsii.Number(6),
		})
	}
	emf := func(fn, name, stat string) awscloudwatch.IMetric { return m.of("ToolRAG", name, stat, fn, 300) }
	lambda := func(fn, name, stat string) awscloudwatch.IMetric { return m.of("AWS/Lambda", name, stat, fn, 300) }
	api := func(name, stat string) awscloudwatch.IMetric { return m.of("AWS/ApiGateway", name, stat, "api", 300) }
	gw := m.fns["gateway"]
	awscloudwatch.NewDashboard(stack, jsii.String("Dashboard"), &awscloudwatch.DashboardProps{
		DashboardName:   jsii.String("toolrag-" + cfg.Stage),
		DefaultInterval: awscdk.Duration_Hours(jsii.Number(3)),
		Widgets: &[]*[]awscloudwatch.IWidget{
			{
				graph("Calls", api("Count", "Sum"), emf("gateway", "mcp_tool_calls_total", "Sum"), emf("gateway", "mcp_find_tools_total", "Sum")),
				graph("Errors by kind",
					api("5xx", "Sum"), api("4xx", "Sum"),
					emf("gateway", "auth_lookup_errors_total", "Sum"), emf("gateway", "session_store_errors_total", "Sum"),
					emf("gateway", "rate_limit_store_errors_total", "Sum"), emf("gateway", "mcp_tool_call_errors_total", "Sum"),
					emf("gateway", "auth_failures_total", "Sum"), lambda("gateway", "Errors", "Sum"), lambda("gateway", "Throttles", "Sum")),
				graph("Latency p50 / p99 (ms)", api(apiLatency, "p50"), api(apiLatency, "p99"), lambda("gateway", "Duration", "p50"), lambda("gateway", "Duration", "p99")),
			},
			{
				awscloudwatch.NewLogQueryWidget(&awscloudwatch.LogQueryWidgetProps{
					Title: jsii.String("Gateway cold starts"), LogGroupNames: &[]*string{gw.LogGroup().LogGroupName()},
					QueryString: jsii.String(coldStartQuery), View: awscloudwatch.LogQueryVisualizationType_LINE,
					Width: jsii.Number(8), Height: jsii.Number(6),
				}),
				graph("Index age (s) and catalog size", emf("gateway", "index_age_seconds", "Maximum"), emf("gateway", "tools_in_index", "Maximum")),
				graph("Sync outcome", emf("sync", "sync_successes_total", "Sum"), emf("sync", "sync_failures_total", "Sum"),
					emf("sync", "sync_duration_seconds", "Maximum"), m.of("AWS/SQS", "ApproximateNumberOfMessagesVisible", "Maximum", "queue", 300)),
			},
			{
				graph("Upstream servers", emf("health", "upstreams_up", "Minimum"), emf("health", "upstreams_down", "Maximum")),
				awscloudwatch.NewAlarmStatusWidget(&awscloudwatch.AlarmStatusWidgetProps{
					Title: jsii.String("Alarms"), Alarms: alarmRefs(alarms), Width: jsii.Number(16), Height: jsii.Number(6),
				}),
			},
		},
	})
}

func alarmRefs(alarms []awscloudwatch.IAlarm) *[]interfacesawscloudwatch.IAlarmRef {
	out := make([]interfacesawscloudwatch.IAlarmRef, len(alarms))
	for i, a := range alarms {
		out[i] = a
	}
	return &out
}
