// Package dynamo holds the DynamoDB-backed stores the gateway uses on AWS:
// the tool catalog (a catalog.Store), API keys, the upstream registry with
// health, and MCP sessions. The table layouts are fixed and documented in
// docs/dynamodb.md; CreateTables creates them (for tests, emulators and
// first runs), while production tables come from the CDK/SAM templates.
package dynamo

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/logging"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
)

// Metrics counts what the gateway surfaces in /metrics about DynamoDB. All
// fields are safe for concurrent use; a nil *Metrics counts nothing.
type Metrics struct {
	Retries     atomic.Int64 // requests the SDK retried (any retryable error)
	Throttles   atomic.Int64 // throttled responses (ProvisionedThroughputExceeded, ThrottlingException, ...)
	Unprocessed atomic.Int64 // BatchWriteItem rounds that re-sent UnprocessedItems
	Conflicts   atomic.Int64 // writes retried because another writer changed the same item first
	Rereads     atomic.Int64 // catalog reads repeated because a write interleaved with them
}

// Snapshot returns the counters by metric name.
func (m *Metrics) Snapshot() map[string]int64 {
	if m == nil {
		return map[string]int64{}
	}
	return map[string]int64{
		"dynamodb_retries_total":     m.Retries.Load(),
		"dynamodb_throttles_total":   m.Throttles.Load(),
		"dynamodb_unprocessed_total": m.Unprocessed.Load(),
		"dynamodb_conflicts_total":   m.Conflicts.Load(),
		"dynamodb_rereads_total":     m.Rereads.Load(),
	}
}

func (m *Metrics) add(c *atomic.Int64) {
	if m != nil && c != nil {
		c.Add(1)
	}
}

func (m *Metrics) conflicts() *atomic.Int64 {
	if m == nil {
		return nil
	}
	return &m.Conflicts
}

func (m *Metrics) rereads() *atomic.Int64 {
	if m == nil {
		return nil
	}
	return &m.Rereads
}

func (m *Metrics) unprocessed() *atomic.Int64 {
	if m == nil {
		return nil
	}
	return &m.Unprocessed
}

// Endpoint returns the DynamoDB endpoint override from the environment:
// TOOL_RAG_DYNAMODB_ENDPOINT, then AWS_ENDPOINT_URL_DYNAMODB, then
// AWS_ENDPOINT_URL; "" means the real AWS endpoint of the region.
func Endpoint(getenv func(string) string) string {
	for _, k := range []string{"TOOL_RAG_DYNAMODB_ENDPOINT", "AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"} {
		if v := getenv(k); v != "" {
			return v
		}
	}
	return ""
}

// NewClient returns a DynamoDB client. endpoint overrides the service
// endpoint (DynamoDB Local, LocalStack); when empty, Endpoint(os.Getenv) is
// used. The region comes from the usual AWS configuration and defaults to
// us-east-1. For a loopback endpoint without AWS credentials in the
// environment, dummy static credentials are used (emulators accept any).
// Retries and throttles of every request are counted in m (may be nil).
// Every request is bounded by awsclient.DynamoTimeouts.
func NewClient(ctx context.Context, endpoint string, m *Metrics) (*dynamodb.Client, error) {
	if endpoint == "" {
		endpoint = Endpoint(os.Getenv)
	}
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err != nil || u.Scheme == "" || u.Host == "" {
			return nil, fmt.Errorf("DynamoDB endpoint %q is not a URL like http://127.0.0.1:8000", endpoint)
		}
	}
	cfg, err := awsclient.Bounded(ctx, endpoint, "DynamoDB", awsclient.DynamoTimeouts)
	if err != nil {
		return nil, err
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.Logger = quietChecksumLogger{next: cfg.Logger}
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
		o.Retryer = &countingRetryer{
			RetryerV2: retry.NewStandard(func(so *retry.StandardOptions) {
				so.MaxAttempts = 6
				so.BaseDelay = 25 * time.Millisecond
				so.MaxBackoff = 2 * time.Second
			}),
			m: m,
		}
	}), nil
}

// quietChecksumLogger drops one spurious SDK warning: DynamoDB Local sends
// no X-Amz-Crc32 header on 4xx answers (a failed condition, a missing
// table), and the SDK then compares the body's CRC32 with 0 and logs
// "failed to close HTTP response body ... response did not match expected
// checksum, 0, <crc>". Real mismatches (a header that disagrees with the
// body) are still logged.
type quietChecksumLogger struct{ next logging.Logger }

func (l quietChecksumLogger) Logf(c logging.Classification, format string, v ...any) {
	if c == logging.Warn {
		msg := fmt.Sprintf(format, v...)
		if strings.Contains(msg, "did not match expected checksum, 0, ") {
			return
		}
	}
	if l.next != nil {
		l.next.Logf(c, format, v...)
	}
}

var throttleCheck = retry.IsErrorThrottles{retry.ThrottleErrorCode{Codes: retry.DefaultThrottleErrorCodes}}

// countingRetryer is the SDK's standard retryer with counters.
type countingRetryer struct {
	aws.RetryerV2
	m *Metrics
}

func (r *countingRetryer) IsErrorRetryable(err error) bool {
	if r.m != nil && throttleCheck.IsErrorThrottle(err).Bool() {
		r.m.Throttles.Add(1)
	}
	return r.RetryerV2.IsErrorRetryable(err)
}

func (r *countingRetryer) RetryDelay(attempt int, err error) (time.Duration, error) {
	if r.m != nil {
		r.m.Retries.Add(1)
	}
	return r.RetryerV2.RetryDelay(attempt, err)
}

// Tables names the tables.
type Tables struct {
	Tools    string // TOOL_RAG_TOOLS_TABLE
	Keys     string // TOOL_RAG_KEYS_TABLE
	Registry string // TOOL_RAG_REGISTRY_TABLE
	Sessions string // TOOL_RAG_SESSIONS_TABLE
	// CallSeq holds the opt-in call-sequence counts
	// (TOOL_RAG_CALLSEQ_TABLE); it is read and written only when
	// TOOL_RAG_CALL_SEQUENCES is on.
	CallSeq string
	// Vault holds the sealed per-principal upstream grants and used
	// connect-link nonces (TOOL_RAG_VAULT_TABLE, docs/upstream-auth.md).
	Vault string
}

// Default table names, used when the environment names none.
const (
	DefaultToolsTable    = "toolrag-tools"
	DefaultKeysTable     = "toolrag-keys"
	DefaultRegistryTable = "toolrag-registry"
	DefaultSessionsTable = "toolrag-sessions"
	DefaultCallSeqTable  = "toolrag-callseq"
	DefaultVaultTable    = "toolrag-vault"
)

// TablesFromEnv reads the table names from TOOL_RAG_TOOLS_TABLE,
// TOOL_RAG_KEYS_TABLE, TOOL_RAG_REGISTRY_TABLE, TOOL_RAG_SESSIONS_TABLE and
// TOOL_RAG_CALLSEQ_TABLE and TOOL_RAG_VAULT_TABLE,
// falling back to the Default*Table names.
func TablesFromEnv(getenv func(string) string) Tables {
	get := func(k, def string) string {
		if v := getenv(k); v != "" {
			return v
		}
		return def
	}
	return Tables{
		Tools:    get("TOOL_RAG_TOOLS_TABLE", DefaultToolsTable),
		Keys:     get("TOOL_RAG_KEYS_TABLE", DefaultKeysTable),
		Registry: get("TOOL_RAG_REGISTRY_TABLE", DefaultRegistryTable),
		Sessions: get("TOOL_RAG_SESSIONS_TABLE", DefaultSessionsTable),
		CallSeq:  get("TOOL_RAG_CALLSEQ_TABLE", DefaultCallSeqTable),
		Vault:    get("TOOL_RAG_VAULT_TABLE", DefaultVaultTable),
	}
}

// apiCode returns the error code of an AWS API error, or "".
func apiCode(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}
