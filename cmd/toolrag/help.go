package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
)

// awsEnvHelp says where the AWS commands take their credentials, region,
// endpoint and tables from.
const awsEnvHelp = `AWS access: the credentials are read like the AWS CLI reads them: AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY (and AWS_SESSION_TOKEN), or the profile AWS_PROFILE (default "default")
in ~/.aws/credentials and ~/.aws/config, or an instance or task role. The region is AWS_REGION
(default us-east-1). Tables: TOOL_RAG_KEYS_TABLE, TOOL_RAG_REGISTRY_TABLE, TOOL_RAG_TOOLS_TABLE,
TOOL_RAG_SESSIONS_TABLE, TOOL_RAG_CALLSEQ_TABLE (defaults toolrag-keys, toolrag-registry, ...).
DynamoDB Local or LocalStack: TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 (or
AWS_ENDPOINT_URL); a loopback endpoint needs no credentials.`

// awsHint rewords the errors a first run of an AWS command meets (no
// credentials, nothing listening at the endpoint, no tables) into what to
// set or run; any other error is returned as it is.
func awsHint(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	switch {
	case strings.Contains(msg, "get identity") || strings.Contains(msg, "get credentials") ||
		strings.Contains(msg, "failed to retrieve credentials") || strings.Contains(msg, "no EC2 IMDS role"):
		return &hintError{err: err, msg: "no AWS credentials found.\n" + awsEnvHelp +
			"\nFor DynamoDB Local: TOOL_RAG_DYNAMODB_ENDPOINT=http://127.0.0.1:8000 toolrag dynamo create-tables"}
	case strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host"):
		ep := dynamo.Endpoint(os.Getenv)
		if ep == "" {
			ep = "the AWS endpoint of the region"
		}
		return &hintError{err: err, msg: fmt.Sprintf("nothing answers at %s (%s).\n%s", ep, lastCause(msg), awsEnvHelp)}
	}
	return withTableHint(err)
}

// hintError is an error reworded for the user; the SDK's chain stays
// reachable with errors.As/Is.
type hintError struct {
	err error
	msg string
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// lastCause is the innermost part of an SDK error chain ("a: b: c" → "c").
func lastCause(msg string) string {
	if i := strings.LastIndex(msg, ": "); i >= 0 {
		return msg[i+2:]
	}
	return msg
}
