// Package s3results is the AWS runtime's result store (resultstore.Store):
// spilled tool results as S3 objects under a prefix of the gateway's
// bucket, one PUT per spilled block, one GET per read, and presigned GET
// URLs for downloads too large for one Lambda response. The record (owner,
// tool, expiry) travels in the object's metadata; the stacks expire the
// prefix with a lifecycle rule, and Get refuses an expired record before
// that rule has run.
package s3results

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/toolrag/mcp-gateway/pkg/resultstore"
)

// Store keeps results in one bucket under Prefix.
type Store struct {
	client  *s3.Client
	presign *s3.PresignClient
	bucket  string
	prefix  string
	now     func() time.Time
}

var _ resultstore.Store = (*Store)(nil)

// New returns a Store on bucket under prefix (e.g. "results/").
func New(client *s3.Client, bucket, prefix string) *Store {
	return &Store{client: client, presign: s3.NewPresignClient(client), bucket: bucket, prefix: prefix, now: time.Now}
}

// recordMeta is the object metadata key of the encoded record.
const recordMeta = "toolrag-record"

func (s *Store) key(id string) string { return s.prefix + id }

// Put implements resultstore.Store.
func (s *Store) Put(ctx context.Context, rec resultstore.Record, body []byte) error {
	if !resultstore.ValidID(rec.ID) {
		return fmt.Errorf("store result: invalid id %q", rec.ID)
	}
	raw, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	_, err = s.client.PutObject(ctx, &s3.PutObjectInput{
		Bucket: aws.String(s.bucket), Key: aws.String(s.key(rec.ID)),
		Body: bytes.NewReader(body), ContentLength: aws.Int64(int64(len(body))),
		ContentType: aws.String(contentType(rec)),
		Metadata:    map[string]string{recordMeta: base64.RawURLEncoding.EncodeToString(raw)},
		Expires:     aws.Time(rec.Expires),
	})
	if err != nil {
		return fmt.Errorf("store result in s3://%s/%s: %w", s.bucket, s.key(rec.ID), err)
	}
	return nil
}

func contentType(rec resultstore.Record) string {
	if rec.MIMEType != "" {
		return rec.MIMEType
	}
	if rec.Binary {
		return "application/octet-stream"
	}
	return "text/plain; charset=utf-8"
}

// Get implements resultstore.Store.
func (s *Store) Get(ctx context.Context, id string) (resultstore.Record, []byte, error) {
	if !resultstore.ValidID(id) {
		return resultstore.Record{}, nil, resultstore.ErrNotFound
	}
	out, err := s.client.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(id))})
	if err != nil {
		var nsk *types.NoSuchKey
		var re *smithyhttp.ResponseError
		if errors.As(err, &nsk) || (errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound) {
			return resultstore.Record{}, nil, resultstore.ErrNotFound
		}
		return resultstore.Record{}, nil, fmt.Errorf("read result s3://%s/%s: %w", s.bucket, s.key(id), err)
	}
	defer out.Body.Close()
	rec, err := decodeRecord(out.Metadata[recordMeta])
	if err != nil || rec.ID != id {
		return resultstore.Record{}, nil, resultstore.ErrNotFound
	}
	if !s.now().Before(rec.Expires) {
		return resultstore.Record{}, nil, resultstore.ErrNotFound
	}
	body, err := io.ReadAll(out.Body)
	if err != nil {
		return resultstore.Record{}, nil, fmt.Errorf("read result s3://%s/%s: %w", s.bucket, s.key(id), err)
	}
	return rec, body, nil
}

func decodeRecord(v string) (resultstore.Record, error) {
	var rec resultstore.Record
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if err != nil {
		return rec, err
	}
	return rec, json.Unmarshal(raw, &rec)
}

// Sign implements resultstore.Store: an S3 presigned GET, valid for ttl
// (never past the result's expiry). It makes no request.
func (s *Store) Sign(ctx context.Context, rec resultstore.Record, ttl time.Duration) (resultstore.Download, bool, error) {
	if left := rec.Expires.Sub(s.now()); left < ttl {
		ttl = left
	}
	if ttl <= 0 {
		return resultstore.Download{}, false, resultstore.ErrNotFound
	}
	req, err := s.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.key(rec.ID))},
		s3.WithPresignExpires(ttl))
	if err != nil {
		return resultstore.Download{}, false, fmt.Errorf("sign a download URL: %w", err)
	}
	return resultstore.Download{URL: req.URL, Expires: s.now().Add(ttl).UTC().Truncate(time.Second)}, true, nil
}
