// Package resultstore keeps tool results too large to answer inline: a
// spilled content block is stored with its owner (the principal that made
// the call), the tool it came from and an expiry, and is read back through
// resources/read or a short-lived signed URL bound to that owner. Dir is
// the local runtime's store (a directory with expiry, and its signed
// gateway URLs); the AWS runtime's store is S3 (pkg/aws/s3results).
package resultstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"regexp"
	"time"
)

// Record describes one stored result block.
type Record struct {
	ID       string    `json:"id"`
	Owner    string    `json:"owner"`  // the principal that made the call
	Server   string    `json:"server"` // the upstream and tool it came from (the policy is checked again on read)
	Tool     string    `json:"tool"`
	MIMEType string    `json:"mime_type"`
	Binary   bool      `json:"binary"` // the body is raw bytes (a blob), not UTF-8 text
	Size     int64     `json:"size"`
	Expires  time.Time `json:"expires"`
}

// ErrNotFound: no such result, or it has expired.
var ErrNotFound = errors.New("result not found or expired")

// NewID returns a fresh random result id (128 bits, hex).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

// ValidID reports whether id has the shape NewID returns; any other id is
// not looked up.
func ValidID(id string) bool { return idPattern.MatchString(id) }

// Download is a short-lived signed HTTPS (or local HTTP) URL of a stored
// result.
type Download struct {
	URL     string    `json:"url"`
	Expires time.Time `json:"expiresAt"`
}

// Store is what the gateway needs of a result store.
type Store interface {
	Put(ctx context.Context, rec Record, body []byte) error
	// Get returns the record and body of a result that has not expired,
	// or ErrNotFound.
	Get(ctx context.Context, id string) (Record, []byte, error)
	// Sign returns a signed download URL of rec valid for ttl; ok is false
	// when the store cannot sign.
	Sign(ctx context.Context, rec Record, ttl time.Duration) (d Download, ok bool, err error)
}
