// Command health is the health Lambda function: on an EventBridge
// schedule it probes every registered upstream and records the result in
// the registry table. All logic lives in pkg/awsrt.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

func main() {
	awsrt.Main("health", awsrt.NewProber, func(p *awsrt.Prober) { lambda.Start(tracing.Invocation("health", "timer", p.Handle)) })
}
