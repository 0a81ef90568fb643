// Package awsclient builds the AWS SDK clients of the gateway's functions
// (S3, Lambda, SSM Parameter Store, Secrets Manager, KMS; DynamoDB's is
// dynamo.NewClient, with this package's configuration and bounds) from an
// optional endpoint override. The region
// defaults to us-east-1, an emulator on a loopback endpoint gets dummy
// credentials, and every client has explicit HTTP and per-operation
// timeouts, so a service that does not answer fails a request in seconds
// instead of holding it until the Lambda invocation ends.
package awsclient

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// Timeouts of the clients built here. S3 reads of an index blob can take
// long, so an S3 body read is bounded by the caller's context only; the
// answer must start within S3ResponseHeader.
const (
	Connect          = 2 * time.Second
	S3ResponseHeader = 10 * time.Second
	LambdaInvoke     = 10 * time.Second
)

// Timeouts are an SDK client's bounds on one HTTP attempt (connect, send,
// answer) and on one API call, retries included.
type Timeouts struct {
	Attempt, Operation time.Duration
}

// SecretsTimeouts bound the SSM and Secrets Manager clients: a registry
// header's secret is read inside the first request that needs it, so a
// store that does not answer must fail that request in seconds, with an
// error naming the store.
var SecretsTimeouts = Timeouts{Attempt: 3 * time.Second, Operation: 8 * time.Second}

// DynamoTimeouts bound the DynamoDB client (dynamo.NewClient): DynamoDB
// answers single-item calls in milliseconds and a 1 MB Scan page in well
// under a second.
var DynamoTimeouts = Timeouts{Attempt: 5 * time.Second, Operation: 12 * time.Second}

// or fills t's zero fields from def.
func (t Timeouts) or(def Timeouts) Timeouts {
	if t.Attempt <= 0 {
		t.Attempt = def.Attempt
	}
	if t.Operation <= 0 {
		t.Operation = def.Operation
	}
	return t
}

// Load loads the SDK configuration for a client of endpoint ("" = the
// service's AWS endpoint). Without AWS_REGION the region is us-east-1;
// for a loopback endpoint without credentials in the environment, dummy
// static credentials are used (emulators accept any).
func Load(ctx context.Context, endpoint string) (aws.Config, error) {
	var opts []func(*config.LoadOptions) error
	if os.Getenv("AWS_REGION") == "" && os.Getenv("AWS_DEFAULT_REGION") == "" {
		opts = append(opts, config.WithRegion("us-east-1"))
	}
	if endpoint != "" && os.Getenv("AWS_ACCESS_KEY_ID") == "" {
		if u, err := url.Parse(endpoint); err == nil && IsLoopback(u.Hostname()) {
			opts = append(opts, config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
		}
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	return cfg, nil
}

// Bounded is Load with the bounds of t: each HTTP attempt within
// t.Attempt (connect within Connect), each API call, retries included,
// within t.Operation, its deadline error naming service.
func Bounded(ctx context.Context, endpoint, service string, t Timeouts) (aws.Config, error) {
	cfg, err := Load(ctx, endpoint)
	if err != nil {
		return aws.Config{}, err
	}
	cfg.HTTPClient = AttemptClient(min(Connect, t.Attempt), t.Attempt)
	cfg.APIOptions = append(cfg.APIOptions, OperationDeadline(service, t.Operation))
	return cfg, nil
}

// IsLoopback reports whether host is localhost or a loopback address.
func IsLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// S3 returns an S3 client (path-style addressing on an endpoint override,
// as emulators and LocalStack need).
func S3(ctx context.Context, endpoint string) (*s3.Client, error) {
	ac, err := Load(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return s3.NewFromConfig(ac, func(o *s3.Options) {
		// Ranged GETs carry no whole-object checksum; the index loader
		// verifies the SHA-256 itself. Do not log each skip.
		o.DisableLogOutputChecksumValidationSkipped = true
		o.HTTPClient = awshttp.NewBuildableClient().
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = Connect }).
			WithTransportOptions(func(tr *http.Transport) {
				tr.TLSHandshakeTimeout = Connect
				tr.ResponseHeaderTimeout = S3ResponseHeader
			})
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
			o.UsePathStyle = true
		}
	}), nil
}

// Lambda returns a Lambda client whose invocations are bounded by
// LambdaInvoke.
func Lambda(ctx context.Context, endpoint string) (*lambda.Client, error) {
	ac, err := Load(ctx, endpoint)
	if err != nil {
		return nil, err
	}
	return lambda.NewFromConfig(ac, func(o *lambda.Options) {
		o.HTTPClient = awshttp.NewBuildableClient().
			WithDialerOptions(func(d *net.Dialer) { d.Timeout = Connect }).
			WithTransportOptions(func(tr *http.Transport) { tr.TLSHandshakeTimeout = Connect }).
			WithTimeout(LambdaInvoke)
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// SSM returns a Parameter Store client bounded by t (zero fields:
// SecretsTimeouts).
func SSM(ctx context.Context, endpoint string, t Timeouts) (*ssm.Client, error) {
	ac, err := Bounded(ctx, endpoint, "SSM Parameter Store", t.or(SecretsTimeouts))
	if err != nil {
		return nil, err
	}
	return ssm.NewFromConfig(ac, func(o *ssm.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// SecretsManager returns a Secrets Manager client bounded by t (zero
// fields: SecretsTimeouts).
func SecretsManager(ctx context.Context, endpoint string, t Timeouts) (*secretsmanager.Client, error) {
	ac, err := Bounded(ctx, endpoint, "Secrets Manager", t.or(SecretsTimeouts))
	if err != nil {
		return nil, err
	}
	return secretsmanager.NewFromConfig(ac, func(o *secretsmanager.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// KMSTimeouts bound the KMS client of the token vault: KMS answers a
// GenerateDataKey or Decrypt in milliseconds.
var KMSTimeouts = Timeouts{Attempt: 3 * time.Second, Operation: 8 * time.Second}

// KMS returns a KMS client bounded by KMSTimeouts.
func KMS(ctx context.Context, endpoint string) (*kms.Client, error) {
	ac, err := Bounded(ctx, endpoint, "KMS", KMSTimeouts)
	if err != nil {
		return nil, err
	}
	return kms.NewFromConfig(ac, func(o *kms.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}
