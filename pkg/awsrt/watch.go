package awsrt

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/indexpub"
)

// watchedBucket wraps the index bucket: it counts the times the pointer
// object was read with a body (a new pointer: something was published),
// and how long reads took, which splits an index load into fetch and
// parse time.
type watchedBucket struct {
	indexpub.Bucket
	pointer string // key of the pointer object

	gen      atomic.Int64 // pointer reads that returned a body
	getNanos atomic.Int64 // total time spent in Get
	getBytes atomic.Int64 // total bytes returned by Get
}

func (b *watchedBucket) Get(ctx context.Context, key, ifNoneMatch string) ([]byte, string, error) {
	start := time.Now()
	body, etag, err := b.Bucket.Get(ctx, key, ifNoneMatch)
	b.getNanos.Add(int64(time.Since(start)))
	if err == nil {
		b.getBytes.Add(int64(len(body)))
		if key == b.pointer {
			b.gen.Add(1)
		}
	}
	return body, etag, err
}

func (b *watchedBucket) generation() int64 { return b.gen.Load() }
