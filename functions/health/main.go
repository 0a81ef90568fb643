// Command health is the health Lambda function: on an EventBridge
// schedule it probes every registered upstream and records the result in
// the registry table. All logic lives in pkg/awsrt.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

func main() {
	awsrt.Main("health", func(ctx context.Context, cfg awsrt.Config) (func(), error) {
		p, err := awsrt.NewProber(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return func() { lambda.Start(tracing.Invocation("health", "timer", p.Handle)) }, nil
	})
}
