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
