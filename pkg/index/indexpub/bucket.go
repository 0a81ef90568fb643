// Package indexpub publishes a vector index and its metadata to a blob store
// and loads it back, atomically: the index and meta blobs are uploaded under
// content-addressed keys, then a small pointer object (current.json) is
// switched with a conditional write. Readers follow the pointer, so they see
// the old index or the new one, never a mix, and a publisher that crashes
// before the switch leaves the old index in force.
//
// The blob store is a Bucket: DirBucket (a local directory) here, S3 in the
// AWS deployment. Layout under a prefix:
//
//	<prefix>current.json             the Pointer
//	<prefix>indexes/<sha256>.faiss   faiss IndexIDMap(IndexFlatIP) bytes
//	<prefix>indexes/<sha256>.json    vindex.Meta
//
// where <sha256> is the hex SHA-256 of the .faiss bytes.
package indexpub

import (
	"context"
	"errors"
	"io"
	"time"
)

// Errors a Bucket returns, wrapped.
var (
	// ErrNotExist: the object does not exist.
	ErrNotExist = errors.New("indexpub: object does not exist")
	// ErrNotModified: Get's ifNoneMatch equals the object's ETag.
	ErrNotModified = errors.New("indexpub: object not modified")
	// ErrPrecondition: a conditional Put lost to another writer.
	ErrPrecondition = errors.New("indexpub: precondition failed")
)

// Bucket is the blob store an index is published to. Keys are
// slash-separated; ETags are opaque strings that change whenever the
// content does.
type Bucket interface {
	// Get returns an object and its ETag. When ifNoneMatch is not empty and
	// equals the current ETag, it returns an error wrapping ErrNotModified
	// instead of the body. A missing object gives an error wrapping
	// ErrNotExist. The body belongs to the caller (the Loader decodes the
	// index in place, modifying it).
	Get(ctx context.Context, key, ifNoneMatch string) (body []byte, etag string, err error)
	// Put stores an object atomically (readers see the old or the new
	// content, never a part) and returns its new ETag. With cond.IfMatch it
	// succeeds only if the object's ETag is still cond.IfMatch; with
	// cond.IfNoneMatch only if the object does not exist. A failed
	// condition gives an error wrapping ErrPrecondition (an implementation
	// may report an IfMatch on a missing object as ErrNotExist instead).
	Put(ctx context.Context, key string, body []byte, cond Cond) (etag string, err error)
}

// ReaderPutter is implemented by buckets that can store an object read
// from body (size bytes; seekable, so that a request can be signed and
// retried) instead of from one slice. The Publisher then uploads an index
// straight from its memory instead of encoding a copy first.
type ReaderPutter interface {
	PutReader(ctx context.Context, key string, body io.ReadSeeker, size int64, cond Cond) (etag string, err error)
}

// Cond is the condition of a Put. The zero Cond writes unconditionally.
type Cond struct {
	IfMatch     string // write only if the current ETag equals this
	IfNoneMatch bool   // write only if the object does not exist (create)
}

// Lister is implemented by buckets that can enumerate and delete objects;
// Publisher.Prune needs it. (S3 deployments expire old blobs with lifecycle
// rules instead.)
type Lister interface {
	// List returns the objects whose keys start with prefix.
	List(ctx context.Context, prefix string) ([]ObjectInfo, error)
	// Delete removes an object; deleting a missing object is not an error.
	Delete(ctx context.Context, key string) error
}

// ObjectInfo describes one object returned by List or Head.
type ObjectInfo struct {
	Key     string
	Size    int64
	ModTime time.Time
	ETag    string // set by Head
}

// Header is implemented by buckets that can describe an object without
// reading it (S3 HeadObject, a stat of the file). The Publisher then does
// not upload an index blob that is already stored (blobs are
// content-addressed), and a writer of an object under a fixed key can skip
// a write that would store the same bytes.
type Header interface {
	// Head returns the object's size and ETag; a missing object gives an
	// error wrapping ErrNotExist.
	Head(ctx context.Context, key string) (ObjectInfo, error)
	// ETagOf returns the ETag a Put of body gives the object, or "" when
	// the store cannot tell in advance (then compare nothing: write).
	ETagOf(body []byte) string
}

// Unchanged reports whether key already holds exactly body, asking b
// without reading the object (false when b is not a Header or cannot
// tell), so that the caller can skip a Put that would change nothing.
func Unchanged(ctx context.Context, b Bucket, key string, body []byte) bool {
	h, ok := b.(Header)
	if !ok {
		return false
	}
	want := h.ETagOf(body)
	if want == "" {
		return false
	}
	info, err := h.Head(ctx, key)
	return err == nil && info.Size == int64(len(body)) && info.ETag == want
}
