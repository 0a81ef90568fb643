package awsclient

// The time bounds every SDK client built here carries: an HTTP client whose
// connect and single attempt are bounded, and a middleware that gives every
// API call a deadline, retries included. A service that does not answer
// then fails a request in seconds, with an error naming it, instead of
// holding the request until the Lambda invocation ends.

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/middleware"
)

// AttemptClient is the SDK's HTTP client with connect bounding the TCP
// connect and the TLS handshake, and attempt bounding one whole HTTP
// attempt (connect, send, wait for and read the answer).
func AttemptClient(connect, attempt time.Duration) *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = connect }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.TLSHandshakeTimeout = connect
			tr.ResponseHeaderTimeout = attempt
		}).
		WithTimeout(attempt)
}

// OperationDeadline is an SDK middleware (for Options.APIOptions) that
// gives every API call of service a deadline of d, retries included; a
// caller's earlier deadline stays. The error then says which service did
// not answer.
func OperationDeadline(service string, d time.Duration) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("toolragOperationDeadline",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				ctx, cancel := context.WithTimeoutCause(ctx, d, fmt.Errorf("%s did not answer within %s", service, d))
				defer cancel()
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil && ctx.Err() != nil {
					err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
				}
				return out, md, err
			}), middleware.Before)
	}
}
