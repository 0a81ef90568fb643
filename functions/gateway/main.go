// Command gateway is the gateway Lambda function: MCP at /mcp, the
// Tool-RAG REST API at /tool-rag/* and /health, behind API Gateway (HTTP
// API or REST API) or a Function URL. Configuration: the environment
// contract in docs/aws-runtime.md; all logic lives in pkg/awsrt and
// pkg/aws/lambdahttp.
package main

import (
	"context"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
)

func main() {
	awsrt.Main("gateway", func(ctx context.Context, cfg awsrt.Config) (func(), error) {
		g, err := awsrt.NewGatewayFunction(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return func() { lambdahttp.Start(g) }, nil
	})
}
