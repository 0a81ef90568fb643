// Package s3bucket implements indexpub.Bucket over Amazon S3 (or any
// S3-compatible store with conditional writes): conditional GETs by ETag,
// conditional PUTs (If-Match / If-None-Match: *) for the index pointer, and
// parallel ranged GETs for large index blobs.
package s3bucket

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"golang.org/x/sync/errgroup"

	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
)

// Defaults of Bucket's tuning fields.
const (
	DefaultPartSize = 8 << 20 // objects larger than this are fetched in ranged parts
	DefaultParallel = 8       // ranged GETs in flight per object
)

// Bucket is an indexpub.Bucket (and indexpub.Lister) on one S3 bucket.
// It is safe for concurrent use. Its exported fields tune it; zero values
// select the defaults.
type Bucket struct {
	// PartSize is the size of each ranged GET of a large object; an object
	// of at most PartSize bytes is fetched with one request.
	PartSize int64
	// Parallel bounds the ranged GETs of one object in flight at once.
	Parallel int

	client *s3.Client
	bucket string
}

var (
	_ indexpub.Bucket = (*Bucket)(nil)
	_ indexpub.Lister = (*Bucket)(nil)
	_ indexpub.Header = (*Bucket)(nil)
)

// New returns a Bucket on the named bucket.
func New(client *s3.Client, bucket string) *Bucket {
	return &Bucket{client: client, bucket: bucket}
}

func (b *Bucket) partSize() int64 {
	if b.PartSize > 0 {
		return b.PartSize
	}
	return DefaultPartSize
}

func (b *Bucket) parallel() int {
	if b.Parallel > 0 {
		return b.Parallel
	}
	return DefaultParallel
}

func (b *Bucket) where(key string) string { return "s3://" + b.bucket + "/" + key }

// Get implements indexpub.Bucket. The first request asks for the first
// part with a Range header; when the object is larger, the remaining parts
// are fetched concurrently with If-Match on the first part's ETag, so an
// object replaced in the middle of the download is detected and the whole
// download restarts (up to three times).
func (b *Bucket) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	var lastErr error
	for range 3 {
		body, etag, err := b.get(ctx, key, ifNoneMatch)
		if !errors.Is(err, errChanged) {
			return body, etag, err
		}
		lastErr = err
	}
	return nil, "", fmt.Errorf("s3: %s kept changing while it was downloaded: %w", b.where(key), lastErr)
}

var errChanged = errors.New("object changed during a ranged download")

func (b *Bucket) get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	part := b.partSize()
	in := &s3.GetObjectInput{
		Bucket: aws.String(b.bucket),
		Key:    aws.String(key),
		Range:  aws.String(fmt.Sprintf("bytes=0-%d", part-1)),
	}
	if ifNoneMatch != "" {
		in.IfNoneMatch = aws.String(ifNoneMatch)
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil && isStatus(err, http.StatusRequestedRangeNotSatisfiable) {
		// An empty object has no byte 0: ask again without a range.
		in.Range = nil
		out, err = b.client.GetObject(ctx, in)
	}
	if err != nil {
		return nil, "", b.readError(key, err)
	}
	etag := aws.ToString(out.ETag)
	total, ranged, err := totalSize(out)
	if err != nil {
		out.Body.Close()
		return nil, "", fmt.Errorf("s3: %s: %w", b.where(key), err)
	}
	if !ranged {
		// The whole object came back (no range, or the store ignored it).
		data, err := readAll(out.Body, aws.ToInt64(out.ContentLength))
		out.Body.Close()
		if err != nil {
			return nil, "", fmt.Errorf("s3: reading %s: %w", b.where(key), err)
		}
		return data, etag, nil
	}
	buf := make([]byte, total)
	first := min(part, total)
	_, err = io.ReadFull(out.Body, buf[:first])
	out.Body.Close()
	if err != nil {
		return nil, "", fmt.Errorf("s3: reading %s: %w", b.where(key), err)
	}
	if total > first {
		if err := b.getParts(ctx, key, etag, buf, first, part); err != nil {
			return nil, "", err
		}
	}
	return buf, etag, nil
}

// getParts fills buf[from:] with ranged GETs of size part, at most
// Parallel at once, each conditional on etag. The first failure cancels
// the rest.
func (b *Bucket) getParts(ctx context.Context, key, etag string, buf []byte, from, part int64) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(b.parallel())
	total := int64(len(buf))
	for off := from; off < total && gctx.Err() == nil; off += part {
		end := min(off+part, total) // exclusive
		g.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err // a part failed while this one waited for its turn
			}
			return b.getPart(gctx, key, etag, buf[off:end], off)
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// getPart fills dst with the bytes of key from off on, conditional on etag.
func (b *Bucket) getPart(ctx context.Context, key, etag string, dst []byte, off int64) error {
	last := off + int64(len(dst)) - 1
	in := &s3.GetObjectInput{
		Bucket: aws.String(b.bucket), Key: aws.String(key),
		Range: aws.String(fmt.Sprintf("bytes=%d-%d", off, last)),
	}
	if etag != "" {
		in.IfMatch = aws.String(etag)
	}
	out, err := b.client.GetObject(ctx, in)
	if err != nil {
		if isStatus(err, http.StatusPreconditionFailed) || isNotFound(err) {
			return errChanged
		}
		return fmt.Errorf("s3: reading bytes %d-%d of %s: %w", off, last, b.where(key), err)
	}
	defer out.Body.Close()
	if got := aws.ToString(out.ETag); etag != "" && got != "" && got != etag {
		return errChanged // a store that ignores If-Match on GET
	}
	if _, err := io.ReadFull(out.Body, dst); err != nil {
		return fmt.Errorf("s3: reading bytes %d-%d of %s: %w", off, last, b.where(key), err)
	}
	return nil
}

// totalSize returns the object size from a ranged response's Content-Range
// ("bytes 0-8388607/12345678"); ranged is false for a whole-object answer.
func totalSize(out *s3.GetObjectOutput) (total int64, ranged bool, err error) {
	cr := aws.ToString(out.ContentRange)
	if cr == "" {
		return aws.ToInt64(out.ContentLength), false, nil
	}
	_, size, ok := strings.Cut(cr, "/")
	if !ok || size == "*" {
		return 0, false, fmt.Errorf("unexpected Content-Range %q", cr)
	}
	n, err := strconv.ParseInt(size, 10, 64)
	if err != nil || n < 0 {
		return 0, false, fmt.Errorf("unexpected Content-Range %q", cr)
	}
	return n, true, nil
}

func readAll(r io.Reader, size int64) ([]byte, error) {
	if size > 0 {
		buf := make([]byte, size)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(r)
}

func (b *Bucket) readError(key string, err error) error {
	switch {
	case isStatus(err, http.StatusNotModified):
		return fmt.Errorf("s3: %s: %w", b.where(key), indexpub.ErrNotModified)
	case isNotFound(err):
		return fmt.Errorf("s3: %s: %w", b.where(key), indexpub.ErrNotExist)
	}
	return fmt.Errorf("s3: reading %s: %w", b.where(key), err)
}

// Put implements indexpub.Bucket with one PutObject of a seekable body
// (the SDK can then sign the payload hash over plain http endpoints too).
func (b *Bucket) Put(ctx context.Context, key string, body []byte, cond indexpub.Cond) (string, error) {
	return b.PutReader(ctx, key, bytes.NewReader(body), int64(len(body)), cond)
}

// PutReader implements indexpub.ReaderPutter: Put from a seekable reader of
// size bytes.
func (b *Bucket) PutReader(ctx context.Context, key string, body io.ReadSeeker, size int64, cond indexpub.Cond) (string, error) {
	in := &s3.PutObjectInput{
		Bucket:        aws.String(b.bucket),
		Key:           aws.String(key),
		Body:          body,
		ContentLength: aws.Int64(size),
		ContentType:   aws.String(contentType(key)),
	}
	switch {
	case cond.IfMatch != "":
		in.IfMatch = aws.String(cond.IfMatch)
	case cond.IfNoneMatch:
		in.IfNoneMatch = aws.String("*")
	}
	out, err := b.client.PutObject(ctx, in)
	if err != nil {
		switch {
		// 409 ConditionalRequestConflict: a concurrent conditional write
		// to the same key is in progress; it is another writer winning.
		case isStatus(err, http.StatusPreconditionFailed), isCode(err, "ConditionalRequestConflict"):
			return "", fmt.Errorf("s3: %s: %w", b.where(key), indexpub.ErrPrecondition)
		case cond.IfMatch != "" && isNotFound(err):
			return "", fmt.Errorf("s3: %s: %w", b.where(key), indexpub.ErrNotExist)
		}
		return "", fmt.Errorf("s3: writing %s: %w", b.where(key), err)
	}
	return aws.ToString(out.ETag), nil
}

func contentType(key string) string {
	if path.Ext(key) == ".json" {
		return "application/json"
	}
	return "application/octet-stream"
}

// List implements indexpub.Lister.
func (b *Bucket) List(ctx context.Context, prefix string) ([]indexpub.ObjectInfo, error) {
	var out []indexpub.ObjectInfo
	p := s3.NewListObjectsV2Paginator(b.client, &s3.ListObjectsV2Input{Bucket: aws.String(b.bucket), Prefix: aws.String(prefix)})
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("s3: listing %s: %w", b.where(prefix), err)
		}
		for _, o := range page.Contents {
			out = append(out, indexpub.ObjectInfo{Key: aws.ToString(o.Key), Size: aws.ToInt64(o.Size), ModTime: aws.ToTime(o.LastModified)})
		}
	}
	return out, nil
}

// Head implements indexpub.Header with one HeadObject.
func (b *Bucket) Head(ctx context.Context, key string) (indexpub.ObjectInfo, error) {
	out, err := b.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
	if err != nil {
		if isNotFound(err) {
			return indexpub.ObjectInfo{}, fmt.Errorf("s3: %s: %w", b.where(key), indexpub.ErrNotExist)
		}
		return indexpub.ObjectInfo{}, fmt.Errorf("s3: reading the attributes of %s: %w", b.where(key), err)
	}
	return indexpub.ObjectInfo{Key: key, Size: aws.ToInt64(out.ContentLength), ModTime: aws.ToTime(out.LastModified), ETag: aws.ToString(out.ETag)}, nil
}

// ETagOf implements indexpub.Header: S3 gives an object stored with one
// PutObject (as Put does), unencrypted or with SSE-S3, the quoted hex MD5 of
// its bytes. With SSE-KMS the ETag is something else; the comparison then
// fails and the object is simply written again.
func (b *Bucket) ETagOf(body []byte) string {
	sum := md5.Sum(body)
	return `"` + hex.EncodeToString(sum[:]) + `"`
}

// Delete implements indexpub.Lister.
func (b *Bucket) Delete(ctx context.Context, key string) error {
	_, err := b.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: aws.String(b.bucket), Key: aws.String(key)})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("s3: deleting %s: %w", b.where(key), err)
	}
	return nil
}

func isStatus(err error, status int) bool {
	var re *smithyhttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == status
}

func isCode(err error, code string) bool {
	var ae smithy.APIError
	return errors.As(err, &ae) && ae.ErrorCode() == code
}

// isNotFound reports a missing object (not a missing bucket, which is a
// configuration error and must not read as "nothing published yet").
func isNotFound(err error) bool {
	if isCode(err, "NoSuchBucket") {
		return false
	}
	var nsk *types.NoSuchKey
	var nf *types.NotFound
	return errors.As(err, &nsk) || errors.As(err, &nf) || isCode(err, "NoSuchKey") || isStatus(err, http.StatusNotFound)
}
