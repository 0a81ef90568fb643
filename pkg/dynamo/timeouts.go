package dynamo

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go/middleware"
)

// Timeouts bound a DynamoDB client's requests, so that a DynamoDB that
// does not answer fails a request in seconds instead of holding it until
// the Lambda invocation ends. Zero fields take the Default* values.
type Timeouts struct {
	// Connect bounds the TCP connect and the TLS handshake of one attempt.
	Connect time.Duration
	// Attempt bounds one HTTP attempt (connect, send, wait for and read
	// the answer). DynamoDB answers single-item calls in milliseconds and
	// a 1 MB Scan page in well under a second.
	Attempt time.Duration
	// Operation bounds one API call, retries included.
	Operation time.Duration
}

// Defaults of Timeouts.
const (
	DefaultConnectTimeout   = 2 * time.Second
	DefaultAttemptTimeout   = 5 * time.Second
	DefaultOperationTimeout = 12 * time.Second
)

func (t Timeouts) withDefaults() Timeouts {
	if t.Connect <= 0 {
		t.Connect = DefaultConnectTimeout
	}
	if t.Attempt <= 0 {
		t.Attempt = DefaultAttemptTimeout
	}
	if t.Operation <= 0 {
		t.Operation = DefaultOperationTimeout
	}
	return t
}

// httpClient is the SDK's HTTP client with the connect and attempt
// timeouts.
func (t Timeouts) httpClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = t.Connect }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.TLSHandshakeTimeout = t.Connect
			tr.ResponseHeaderTimeout = t.Attempt
		}).
		WithTimeout(t.Attempt)
}

// operationTimeout is an SDK middleware that gives every API call a
// deadline of d (retries included); a caller's earlier deadline stays.
func operationTimeout(d time.Duration) func(*middleware.Stack) error {
	return func(s *middleware.Stack) error {
		return s.Initialize.Add(middleware.InitializeMiddlewareFunc("toolragOperationTimeout",
			func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				ctx, cancel := context.WithTimeoutCause(ctx, d, fmt.Errorf("DynamoDB did not answer within %s", d))
				defer cancel()
				out, md, err := next.HandleInitialize(ctx, in)
				if err != nil && ctx.Err() != nil {
					err = fmt.Errorf("%w: %w", context.Cause(ctx), err)
				}
				return out, md, err
			}), middleware.Before)
	}
}
