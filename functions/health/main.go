// Command health is the health Lambda function: on an EventBridge
// schedule it probes every registered upstream and records the result in
// the registry table. All logic lives in pkg/awsrt.
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
		slog.Error("health: configuration", "error", err)
		os.Exit(1)
	}
	p, err := awsrt.NewProber(context.Background(), cfg)
	if err != nil {
		slog.Error("health: start failed", "error", err)
		os.Exit(1)
	}
	lambda.Start(p.Handle)
}
