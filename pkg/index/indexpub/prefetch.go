package indexpub

import (
	"context"
	"errors"
	"fmt"
	"sync"
)

// CatalogPrefetch reads the catalog copy, and the keyword analysis it
// names, in the background, so that a cold start fetches and decodes them
// while it loads the index instead of after it. The keyword analysis is
// requested as soon as the copy's header names it, while the tools are
// still being decoded.
//
// It answers once: the first Catalog call takes its copy (later calls, and
// a copy written for another index than the one asked for, are told to
// read the copy themselves), and Release drops what was not taken (a cold
// start that did not use the copy), so it holds nothing after the cold
// start.
type CatalogPrefetch[K any] struct {
	done   chan struct{} // closed when the copy is read (or failed)
	kwOnce sync.Once
	kwDone chan struct{} // closed when the analysis is read (or failed)
	kwSHA  string        // set before kwDone is closed

	mu       sync.Mutex // guards the rest
	c        CatalogCopy
	etag     string
	err      error
	kw       K
	kwErr    error
	taken    bool // the copy was asked for
	released bool // Release was called: keep nothing
}

// ErrNoPrefetch is returned by CatalogPrefetch.Catalog when it has no copy
// to give: the caller reads the copy itself (ReadCatalog).
var ErrNoPrefetch = errors.New("indexpub: no prefetched catalog copy for this index")

// PrefetchCatalog starts reading the catalog copy under prefix in b, and
// the keyword analysis it names, decoded by decodeKeywords.
func PrefetchCatalog[K any](ctx context.Context, b Bucket, prefix string, decodeKeywords func([]byte) (K, error)) *CatalogPrefetch[K] {
	p := &CatalogPrefetch[K]{done: make(chan struct{}), kwDone: make(chan struct{})}
	startKeywords := func(sha string) {
		p.kwOnce.Do(func() {
			p.kwSHA = sha
			if sha == "" {
				p.mu.Lock()
				p.kwErr = errors.New("no keyword analysis was published with the catalog copy")
				p.mu.Unlock()
				close(p.kwDone)
				return
			}
			go func() {
				defer close(p.kwDone)
				kw, err := readKeywords(ctx, b, prefix, sha, decodeKeywords)
				p.mu.Lock()
				if !p.released {
					p.kw = kw
				}
				p.kwErr = err
				p.mu.Unlock()
			}()
		})
	}
	go func() {
		defer close(p.done)
		body, etag, err := b.Get(ctx, prefix+CatalogKey, "")
		var c CatalogCopy
		if err == nil {
			if c, err = decodeCatalog(body, func(_, kw string) { startKeywords(kw) }); err != nil {
				c, err = CatalogCopy{}, fmt.Errorf("catalog copy %s%s: %w", prefix, CatalogKey, err)
			}
		}
		startKeywords(c.KeywordsSHA256) // a JSON copy has no early header; "" on error
		p.mu.Lock()
		if !p.released {
			p.c, p.etag = c, etag
		}
		p.err = err
		p.mu.Unlock()
	}()
	return p
}

// Catalog returns the prefetched copy, as ReadCatalog would, when it was
// written for the index with hash indexSHA and was not taken before;
// otherwise an error wrapping ErrNoPrefetch. It waits for the read to end
// (or ctx).
func (p *CatalogPrefetch[K]) Catalog(ctx context.Context, indexSHA string) (CatalogCopy, string, error) {
	p.mu.Lock()
	taken := p.taken
	p.taken = true
	p.mu.Unlock()
	if taken {
		return CatalogCopy{}, "", ErrNoPrefetch
	}
	select {
	case <-p.done:
	case <-ctx.Done():
		return CatalogCopy{}, "", ctx.Err()
	}
	p.mu.Lock()
	c, etag, err, released := p.c, p.etag, p.err, p.released
	p.c = CatalogCopy{} // the caller holds it now
	p.mu.Unlock()
	switch {
	case released:
		return CatalogCopy{}, "", ErrNoPrefetch
	case err != nil:
		return CatalogCopy{}, "", err
	case c.IndexSHA256 != indexSHA:
		// Written for another index (a sync switched the pointer
		// meanwhile): the caller reads the copy again.
		return CatalogCopy{}, "", fmt.Errorf("%w (it is for index %s)", ErrNoPrefetch, c.IndexSHA256)
	}
	return c, etag, nil
}

// Keywords returns the keyword analysis with hash sha, decoded, once the
// copy naming it was read; an error when the prefetched analysis is
// another one (the caller reads it itself) or could not be read or
// decoded.
func (p *CatalogPrefetch[K]) Keywords(ctx context.Context, sha string) (K, error) {
	var zero K
	select {
	case <-p.kwDone:
	case <-ctx.Done():
		return zero, ctx.Err()
	}
	if p.kwSHA != sha {
		return zero, fmt.Errorf("%w (the prefetched keyword analysis is %q, not %q)", ErrNoPrefetch, p.kwSHA, sha)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.released {
		return zero, ErrNoPrefetch
	}
	kw, err := p.kw, p.kwErr
	p.kw = zero // the caller holds it now
	return kw, err
}

// Release drops whatever was prefetched and not taken (a cold start that
// read the catalog from elsewhere, or no analysis asked for); later calls
// are told to read for themselves.
func (p *CatalogPrefetch[K]) Release() {
	var zero K
	p.mu.Lock()
	p.released, p.taken = true, true
	p.c, p.kw = CatalogCopy{}, zero
	p.mu.Unlock()
}

// readKeywords reads the keyword analysis sha under prefix and decodes it.
func readKeywords[K any](ctx context.Context, b Bucket, prefix, sha string, decode func([]byte) (K, error)) (K, error) {
	raw, err := ReadKeywords(ctx, b, prefix, sha)
	if err != nil {
		var zero K
		return zero, err
	}
	return decode(raw)
}
