// Command sync is the sync Lambda function: on an EventBridge schedule or
// an asynchronous invoke ({"mode":"full"}) it pulls every registered
// upstream's tools into the tools table and publishes a rebuilt index to
// S3. All logic lives in pkg/awsrt.
package main

import (
	"context"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

func main() {
	awsrt.Main("sync", func(ctx context.Context, cfg awsrt.Config) (func(), error) {
		s, err := awsrt.NewSyncer(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return func() { lambda.Start(tracing.Invocation("sync", "timer", s.Handle)) }, nil
	})
}
