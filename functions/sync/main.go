// Command sync is the sync Lambda function: on an EventBridge schedule or
// an asynchronous invoke ({"mode":"full"}) it pulls every registered
// upstream's tools into the tools table and publishes a rebuilt index to
// S3. All logic lives in pkg/awsrt.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/lambdalimits"
)

func main() {
	slog.SetDefault(config.NewLogger(os.Getenv, os.Stdout))
	lambdalimits.LimitMemory(os.Getenv)
	cfg, err := awsrt.ConfigFromEnv(os.Getenv)
	if err != nil {
		slog.Error("sync: configuration", "error", err)
		os.Exit(1)
	}
	s, err := awsrt.NewSyncer(context.Background(), cfg)
	if err != nil {
		slog.Error("sync: start failed", "error", err)
		os.Exit(1)
	}
	lambda.Start(s.Handle)
}
