package awsrt

import (
	"net"
	"net/http"
	"time"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
)

// HTTP timeouts of the S3 and Lambda clients (DynamoDB's are in
// dynamo.Timeouts): a service that does not answer fails the request in
// seconds instead of holding it until the invocation ends. S3 reads of an
// index blob can take long, so its body read is bounded by the caller's
// context only; the answer must start within s3ResponseHeaderTimeout.
const (
	sdkConnectTimeout       = 2 * time.Second
	s3ResponseHeaderTimeout = 10 * time.Second
	lambdaInvokeTimeout     = 10 * time.Second
)

// Timeouts of the SSM and Secrets Manager clients: one HTTP attempt
// (connect, send, answer) and one API call, retries included. A registry
// header's secret is read inside the first request that needs it, so a
// store that does not answer must fail that request in seconds, with an
// error naming the store, rather than hold it until the invocation ends.
const (
	secretsAttemptTimeout   = 3 * time.Second
	secretsOperationTimeout = 8 * time.Second
)

// sdkTimeouts are an SDK client's attempt and operation timeouts; zero
// fields take the defaults of the client's service.
type sdkTimeouts struct {
	Attempt, Operation time.Duration
}

func (t sdkTimeouts) or(def sdkTimeouts) sdkTimeouts {
	if t.Attempt <= 0 {
		t.Attempt = def.Attempt
	}
	if t.Operation <= 0 {
		t.Operation = def.Operation
	}
	return t
}

func s3HTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = sdkConnectTimeout }).
		WithTransportOptions(func(tr *http.Transport) {
			tr.TLSHandshakeTimeout = sdkConnectTimeout
			tr.ResponseHeaderTimeout = s3ResponseHeaderTimeout
		})
}

func lambdaHTTPClient() *awshttp.BuildableClient {
	return awshttp.NewBuildableClient().
		WithDialerOptions(func(d *net.Dialer) { d.Timeout = sdkConnectTimeout }).
		WithTransportOptions(func(tr *http.Transport) { tr.TLSHandshakeTimeout = sdkConnectTimeout }).
		WithTimeout(lambdaInvokeTimeout)
}
