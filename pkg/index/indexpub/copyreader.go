package indexpub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
)

// CopyReader reads the catalog copy published with an index, for a
// process that follows the index another one publishes (the AWS
// gateway). The first read can be answered by a prefetch started with the
// cold start (Prefetch); the keyword analysis the copy names comes with
// the first copy only (later, the follower's keyword index analyses the
// few tools that changed, which costs less than decoding every tool's);
// reading the same index's copy again is a conditional GET. A CopyReader
// is not safe for concurrent Reads: its follower serialises them.
type CopyReader[K any] struct {
	Bucket Bucket
	Prefix string
	// Decode decodes the keyword analysis.
	Decode func([]byte) (K, error)
	Log    *slog.Logger

	prefetch  *CatalogPrefetch[K]
	sha, etag string // the copy Read returned last
	kwTried   bool
}

// Prefetch starts reading the copy, and the analysis it names, in the
// background; the first Read takes them.
func (r *CopyReader[K]) Prefetch(ctx context.Context) {
	r.prefetch = PrefetchCatalog(ctx, r.Bucket, r.Prefix, r.Decode)
}

// Release drops what the prefetch holds and no Read took (a cold start
// that did not use the copy must not keep a second catalog).
func (r *CopyReader[K]) Release() {
	if r.prefetch != nil {
		r.prefetch.Release()
	}
}

// Forget makes the next Read unconditional: the catalog was read from
// somewhere else meanwhile.
func (r *CopyReader[K]) Forget() { r.sha, r.etag = "", "" }

// Read returns the copy written for the index indexSHA and, with the first
// copy it returns, the keyword analysis that copy names (kwOK false when
// there is none or it cannot be used: logged). Errors: ErrNotModified, the
// copy is the one Read returned last; ErrNotExist, there is no copy, or
// only one written for another index; any other, the copy is unusable.
func (r *CopyReader[K]) Read(ctx context.Context, indexSHA string) (c CatalogCopy, kw K, kwOK bool, err error) {
	ifNoneMatch := ""
	if r.sha == indexSHA {
		ifNoneMatch = r.etag
	}
	c, etag, err := r.read(ctx, indexSHA, ifNoneMatch)
	if err != nil {
		return c, kw, false, err
	}
	r.sha, r.etag = indexSHA, etag
	if !r.kwTried {
		r.kwTried = true
		kw, kwOK = r.keywords(ctx, c.KeywordsSHA256)
	}
	return c, kw, kwOK, nil
}

// read is ReadCatalog, answered by the prefetch the first time when it
// read the copy of this index.
func (r *CopyReader[K]) read(ctx context.Context, indexSHA, ifNoneMatch string) (CatalogCopy, string, error) {
	if r.prefetch != nil && ifNoneMatch == "" {
		c, etag, err := r.prefetch.Catalog(ctx, indexSHA)
		switch {
		case err == nil:
			return c, etag, nil
		case errors.Is(err, ErrNoPrefetch), errors.Is(err, ErrNotExist):
			// Not this index's copy, or none yet: ask again.
		default:
			r.log().Warn("prefetched catalog copy unusable; reading it again", "error", err)
		}
	}
	c, etag, ok, err := ReadCatalog(ctx, r.Bucket, r.Prefix, indexSHA, ifNoneMatch)
	if err == nil && !ok {
		err = fmt.Errorf("%w: the catalog copy was written for another index than %s", ErrNotExist, indexSHA)
	}
	return c, etag, err
}

// keywords reads and decodes the keyword analysis sha.
func (r *CopyReader[K]) keywords(ctx context.Context, sha string) (kw K, ok bool) {
	if sha == "" {
		r.log().Info("no keyword analysis published with the catalog copy; analysing every tool")
		return kw, false
	}
	var err error
	if r.prefetch != nil {
		if kw, err = r.prefetch.Keywords(ctx, sha); err == nil {
			return kw, true
		}
	}
	if r.prefetch == nil || errors.Is(err, ErrNoPrefetch) {
		if kw, err = readKeywords(ctx, r.Bucket, r.Prefix, sha, r.Decode); err == nil {
			return kw, true
		}
	}
	r.log().Warn("keyword analysis published with the catalog copy unusable; analysing every tool", "error", err)
	var zero K
	return zero, false
}

func (r *CopyReader[K]) log() *slog.Logger {
	if r.Log == nil {
		return slog.Default()
	}
	return r.Log
}

// Prefetched is the prefetch Prefetch started (nil before), for
// diagnostics and tests.
func (r *CopyReader[K]) Prefetched() *CatalogPrefetch[K] { return r.prefetch }
