// Command gateway is the gateway Lambda function: MCP at /mcp, the
// Tool-RAG REST API at /tool-rag/* and /health, behind API Gateway (HTTP
// API or REST API) or a Function URL. Configuration: the environment
// contract in docs/aws-runtime.md; all logic lives in pkg/awsrt.
package main

import (
	"context"
	"log/slog"
	"os"

	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/lambdalimits"
)

func main() {
	slog.SetDefault(config.NewLogger(os.Getenv, os.Stdout))
	lambdalimits.LimitMemory(os.Getenv)
	ctx := context.Background()
	cfg, err := awsrt.ConfigFromEnv(os.Getenv)
	if err != nil {
		slog.Error("gateway: configuration", "error", err)
		os.Exit(1)
	}
	g, err := awsrt.NewGatewayFunction(ctx, cfg)
	if err != nil {
		slog.Error("gateway: cold start failed", "error", err)
		os.Exit(1)
	}
	lambdahttp.Start(g)
}
