package main

import (
	"strconv"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/jsii-runtime-go"
)

// addStreamed adds the streamed front door to stream, the gateway's
// streamed twin (nil: the option is off): a Function URL in
// RESPONSE_STREAM mode, so that the notifications a call sends (progress,
// logs) reach the client while it runs and a call may last up to the
// function's timeout (Lambda's 15 minutes by default) where API
// Gateway's route stops at 29 s.
//
// The URL's AuthType is NONE: the gateway authenticates every request
// itself (API keys, OAuth access tokens), as behind API Gateway, which
// does not authenticate either. A NONE URL needs a resource-based policy
// open to everyone: lambda:InvokeFunctionUrl with FunctionUrlAuthType
// NONE and, for URLs created since October 2025, lambda:InvokeFunction
// limited to invocations through the URL (lambda:InvokedViaFunctionUrl);
// the CDK adds both.
//
// The function has the gateway's code, role and environment with its own
// timeout and reserved concurrency (functions.gatewayStream): long calls
// hold instances the API's requests then still have, and Lambda itself
// ends an API request at the gateway function's 29 s. Every 2.0 event it
// gets is a Function URL request (TOOL_RAG_FUNCTION_URL=1, also behind a
// domain of its own), answered as a stream (TOOL_RAG_FUNCTION_URL_MODE
// unset). The gateway's own tasks run in it too (addTasks).
//
// The URL's OAuth resource metadata names the URL the request came to
// (MCP_GATEWAY_PUBLIC_URL is not set), unless an audience is configured:
// streamed.oauthAudience, else oauth.audience.
func addStreamed(stack awscdk.Stack, cfg Config, stream awslambda.Function, inVpc bool) {
	if stream == nil {
		return
	}
	if inVpc {
		awscdk.Annotations_Of(stream).AddWarningV2(jsii.String("toolrag:streamed-vpc"), jsii.String(
			"the functions are in the stack's VPC (a server runs on Fargate), and AWS documents that Function URLs do not stream "+
				"inside a VPC: check that progress arrives during a call on McpStreamUrl before relying on it"), nil)
	}
	stream.AddEnvironment(jsii.String("TOOL_RAG_FUNCTION_URL"), jsii.String("1"), nil)
	if a := cfg.Streamed.OAuthAudience; a != "" {
		stream.AddEnvironment(jsii.String("TOOLRAG_OAUTH_AUDIENCE"), jsii.String(a), nil)
	} else if cfg.OAuth != nil && strings.HasPrefix(cfg.OAuth.Audience, "http") {
		awscdk.Annotations_Of(stream).AddWarningV2(jsii.String("toolrag:streamed-audience"), jsii.String(
			"the streamed front door's OAuth resource is oauth.audience "+cfg.OAuth.Audience+
				", the API's URL: set streamed.oauthAudience to the McpStreamUrl output (and have tokens issued for it)"), nil)
	}
	url := stream.AddFunctionUrl(&awslambda.FunctionUrlOptions{
		AuthType:   awslambda.FunctionUrlAuthType_NONE,
		InvokeMode: awslambda.InvokeMode_RESPONSE_STREAM,
	})
	timeout := strconv.Itoa(cfg.Functions.GatewayStream.TimeoutSeconds)
	awscdk.NewCfnOutput(stack, jsii.String("McpStreamUrl"), &awscdk.CfnOutputProps{
		Value: awscdk.Fn_Join(jsii.String(""), &[]*string{url.Url(), jsii.String(strings.TrimPrefix(cfg.McpPath, "/"))}),
		Description: jsii.String("MCP endpoint, streamed (Function URL, RESPONSE_STREAM): calls up to " + timeout +
			" s, progress while they run (Authorization: Bearer <key>)"),
	})
	awscdk.NewCfnOutput(stack, jsii.String("GatewayStreamFunctionName"), &awscdk.CfnOutputProps{
		Value: stream.FunctionName(), Description: jsii.String("the streamed front door's function (and the gateway's tasks)"),
	})
}
