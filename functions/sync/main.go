// Command sync is the sync Lambda function: on an EventBridge schedule or
// an asynchronous invoke ({"mode":"full"}) it pulls every registered
// upstream's tools into the tools table and publishes a rebuilt index to
// S3. All logic lives in pkg/awsrt.
package main

import (
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

func main() {
	awsrt.Main("sync", awsrt.NewSyncer, func(s *awsrt.Syncer) { lambda.Start(tracing.Invocation("sync", "timer", s.Handle)) })
}
