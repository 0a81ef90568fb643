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

// addOperations adds what running the stack in a real account needs:
//   - a dead-letter queue for the sync function's asynchronous invokes (the
//     schedule and POST /tool-rag/reindex) that failed all their attempts;
//   - alarms, sent to the AlarmTopic SNS topic: errors of each function,
//     throttles of the gateway, sync failures (the function's own
//     sync_failures_total metric, or a message in the dead-letter queue),
//     and index staleness (no successful sync for three hours, when the
//     sync runs on a schedule).
func addOperations(stack awscdk.Stack, cfg Config, gateway, syncFn, health awslambda.Function) {
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
	five := awscdk.Duration_Minutes(jsii.Number(5))
	alarm := func(id, desc string, m awscloudwatch.IMetric, threshold, periods float64, op awscloudwatch.ComparisonOperator, missing awscloudwatch.TreatMissingData) {
		a := awscloudwatch.NewAlarm(stack, jsii.String(id), &awscloudwatch.AlarmProps{
			Metric: m, Threshold: jsii.Number(threshold), EvaluationPeriods: jsii.Number(periods),
			ComparisonOperator: op, TreatMissingData: missing, AlarmDescription: jsii.String(desc),
		})
		a.AddAlarmAction(awscloudwatchactions.NewSnsAction(topic))
	}
	ge := awscloudwatch.ComparisonOperator_GREATER_THAN_OR_EQUAL_TO_THRESHOLD
	notBreaching := awscloudwatch.TreatMissingData_NOT_BREACHING
	sum := func(o *awscloudwatch.MetricOptions) *awscloudwatch.MetricOptions {
		o.Statistic, o.Period = jsii.String("Sum"), five
		return o
	}
	alarm("GatewayErrorsAlarm", "toolrag gateway: invocations failed (crash, timeout or out of memory)",
		gateway.MetricErrors(sum(&awscloudwatch.MetricOptions{})), 1, 1, ge, notBreaching)
	alarm("GatewayThrottlesAlarm", "toolrag gateway: invocations throttled (account or function concurrency limit)",
		gateway.MetricThrottles(sum(&awscloudwatch.MetricOptions{})), 1, 1, ge, notBreaching)
	alarm("SyncErrorsAlarm", "toolrag sync: runs failed (registry, tools table or index build)",
		syncFn.MetricErrors(sum(&awscloudwatch.MetricOptions{})), 1, 1, ge, notBreaching)
	alarm("HealthErrorsAlarm", "toolrag health: probe rounds failed (registry not writable)",
		health.MetricErrors(sum(&awscloudwatch.MetricOptions{})), 1, 1, ge, notBreaching)
	alarm("SyncDeadLettersAlarm", "toolrag sync: an asynchronous sync (schedule or reindex) failed every attempt; its event is in the dead-letter queue",
		dlq.MetricApproximateNumberOfMessagesVisible(&awscloudwatch.MetricOptions{Statistic: jsii.String("Maximum"), Period: five}), 1, 1, ge, notBreaching)
	syncMetric := func(name string, period awscdk.Duration) awscloudwatch.Metric {
		return awscloudwatch.NewMetric(&awscloudwatch.MetricProps{
			Namespace: jsii.String("ToolRAG"), MetricName: jsii.String(name),
			DimensionsMap: &map[string]*string{"FunctionName": syncFn.FunctionName()},
			Statistic:     jsii.String("Sum"), Period: period,
		})
	}
	alarm("SyncFailuresAlarm", "toolrag sync: sync_failures_total (runs that did not publish)",
		syncMetric("sync_failures_total", five), 1, 1, ge, notBreaching)
	if cfg.SyncSchedule != "off" {
		alarm("IndexStalenessAlarm", "toolrag: no successful sync for 3 hours; the published index no longer follows the upstreams",
			syncMetric("sync_successes_total", awscdk.Duration_Hours(jsii.Number(1))), 1, 3,
			awscloudwatch.ComparisonOperator_LESS_THAN_THRESHOLD, awscloudwatch.TreatMissingData_BREACHING)
	}
}
