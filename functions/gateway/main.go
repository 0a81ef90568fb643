// Command gateway is the gateway Lambda function: MCP at /mcp, the
// Tool-RAG REST API at /tool-rag/* and /health, behind API Gateway (HTTP
// API or REST API) or a Function URL. Configuration: the environment
// contract in docs/aws-runtime.md; all logic lives in pkg/awsrt and
// pkg/aws/lambdahttp.
package main

import (
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
)

func main() {
	awsrt.Main("gateway", awsrt.NewGatewayFunction, func(g *awsrt.GatewayFunction) { lambdahttp.Start(g) })
}
