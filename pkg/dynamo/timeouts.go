package dynamo

import (
	"time"
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
