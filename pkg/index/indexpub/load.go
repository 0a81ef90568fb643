package indexpub

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// Loader loads the current index of a prefix and keeps it fresh. It is safe
// for concurrent use; the returned *vindex.Index is shared, so callers must
// treat it as read-only (Search only).
type Loader struct {
	b      Bucket
	prefix string

	mu   sync.Mutex
	etag string // ETag of the pointer the loaded index came from
	ptr  Pointer
	ix   *vindex.Index
	meta vindex.Meta
}

// NewLoader returns a loader reading the index published under prefix in b.
func NewLoader(b Bucket, prefix string) *Loader {
	return &Loader{b: b, prefix: prefix}
}

// Pointer returns the pointer of the index loaded last, and false before the
// first successful Load or Refresh.
func (l *Loader) Pointer() (Pointer, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ptr, l.ix != nil
}

// Load reads the pointer and the index and meta it names, and checks them:
// the index bytes must hash to the pointer's SHA-256 and decode, and the
// meta must describe the index; otherwise the error wraps vindex.ErrCorrupt.
// With nothing published the error wraps ErrNotExist.
func (l *Loader) Load(ctx context.Context) (*vindex.Index, vindex.Meta, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.load(ctx, "")
}

// Refresh returns the current index and whether it differs from the one
// returned before. It asks for the pointer with If-None-Match on its last
// ETag, so an unchanged index costs one small conditional read. Before the
// first load it behaves like Load (changed is true). On error the loader
// keeps its previous index for the next call.
func (l *Loader) Refresh(ctx context.Context) (ix *vindex.Index, meta vindex.Meta, changed bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.ix == nil {
		ix, meta, err := l.load(ctx, "")
		return ix, meta, err == nil, err
	}
	old := l.ptr.SHA256
	ix, meta, err = l.load(ctx, l.etag)
	if errors.Is(err, ErrNotModified) {
		return l.ix, l.meta, false, nil
	}
	if err != nil {
		return nil, vindex.Meta{}, false, err
	}
	return ix, meta, l.ptr.SHA256 != old, nil
}

// load fetches the pointer (conditionally on ifNoneMatch) and, when it names
// another index than the loaded one, that index. A blob that vanished
// between reading the pointer and reading the blob (pruned after a newer
// publish) makes it re-read the pointer, a few times.
func (l *Loader) load(ctx context.Context, ifNoneMatch string) (*vindex.Index, vindex.Meta, error) {
	key := l.prefix + PointerKey
	var lastErr error
	for attempt := range 3 {
		body, etag, err := l.b.Get(ctx, key, ifNoneMatch)
		if attempt > 0 && errors.Is(err, ErrNotModified) {
			return nil, vindex.Meta{}, lastErr // the pointer still names the missing blob
		}
		if err != nil {
			if errors.Is(err, ErrNotExist) {
				return nil, vindex.Meta{}, fmt.Errorf("indexpub: no index is published under %q (%s is missing): %w", l.prefix, PointerKey, err)
			}
			if errors.Is(err, ErrNotModified) {
				return nil, vindex.Meta{}, err
			}
			return nil, vindex.Meta{}, fmt.Errorf("indexpub: reading the pointer: %w", err)
		}
		ptr, err := parsePointer(body, key)
		if err != nil {
			return nil, vindex.Meta{}, err
		}
		if l.ix != nil && ptr.SHA256 == l.ptr.SHA256 {
			// The pointer was rewritten but names the index we have.
			l.etag, l.ptr = etag, ptr
			return l.ix, l.meta, nil
		}
		ix, meta, err := l.fetch(ctx, ptr)
		if err == nil {
			l.etag, l.ptr, l.ix, l.meta = etag, ptr, ix, meta
			return ix, meta, nil
		}
		if !errors.Is(err, ErrNotExist) {
			return nil, vindex.Meta{}, err
		}
		lastErr = err
		ifNoneMatch = etag // retry only if the pointer moved on
	}
	return nil, vindex.Meta{}, lastErr
}

// fetch reads and verifies the index and meta a pointer names. The meta is
// read and parsed while the index downloads.
func (l *Loader) fetch(ctx context.Context, ptr Pointer) (*vindex.Index, vindex.Meta, error) {
	type metaResult struct {
		meta vindex.Meta
		err  error
	}
	metaCh := make(chan metaResult, 1)
	go func() {
		metaBody, _, err := l.b.Get(ctx, l.prefix+ptr.Meta, "")
		if err != nil {
			metaCh <- metaResult{err: fmt.Errorf("indexpub: reading index meta %s: %w", ptr.Meta, err)}
			return
		}
		meta, err := vindex.DecodeMeta(metaBody)
		if err != nil {
			metaCh <- metaResult{err: fmt.Errorf("%w: index meta %s is not valid JSON: %v", vindex.ErrCorrupt, ptr.Meta, err)}
			return
		}
		if meta.IndexSHA256 != ptr.SHA256 {
			metaCh <- metaResult{err: fmt.Errorf("%w: index meta %s is for index %s, the pointer names %s", vindex.ErrCorrupt, ptr.Meta, meta.IndexSHA256, ptr.SHA256)}
			return
		}
		metaCh <- metaResult{meta: meta}
	}()
	blob, _, err := l.b.Get(ctx, l.prefix+ptr.Index, "")
	if err != nil {
		<-metaCh
		return nil, vindex.Meta{}, fmt.Errorf("indexpub: reading index %s: %w", ptr.Index, err)
	}
	// The blob is hashed first and then decoded in place: the index keeps
	// the downloaded bytes instead of a copy, so a load needs about the
	// index's size in memory, not twice it.
	sum := sha256Hex(blob)
	m := <-metaCh
	if m.err != nil {
		return nil, vindex.Meta{}, m.err
	}
	if sum != ptr.SHA256 {
		return nil, vindex.Meta{}, fmt.Errorf("%w: index %s has SHA-256 %s, the pointer expects %s (damaged or partial upload)", vindex.ErrCorrupt, ptr.Index, sum, ptr.SHA256)
	}
	ix, err := vindex.DecodeInPlace(blob)
	if err != nil {
		return nil, vindex.Meta{}, fmt.Errorf("indexpub: decoding index %s: %w", ptr.Index, err)
	}
	if err := m.meta.Check(ix); err != nil {
		return nil, vindex.Meta{}, fmt.Errorf("%w: index meta %s does not match index %s: %v", vindex.ErrCorrupt, ptr.Meta, ptr.Index, err)
	}
	return ix, m.meta, nil
}
