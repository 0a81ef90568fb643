package awsrt

import (
	"context"
	"errors"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// keywordAnalyser returns the keyword analysis of a catalog for the copy
// the sync function publishes (indexpub.CatalogWriter.Keywords), so that
// gateways decode it at cold start instead of analysing every tool. It
// keeps its index between runs of a warm instance: only changed tools are
// analysed again.
func keywordAnalyser() indexpub.KeywordsFunc {
	var mu sync.Mutex
	ix := retrieve.NewKeywordIndex(retrieve.FieldWeights{})
	return func(_ context.Context, tools []catalog.Tool, servers []catalog.Server) ([]byte, error) {
		mu.Lock()
		defer mu.Unlock()
		ix.Sync(tools, servers)
		return ix.EncodeTerms(), nil
	}
}

// firstKeywords is readKeywords the first time (the cold start), nil
// afterwards: a warm instance's keyword index is updated incrementally,
// analysing only the tools that changed, which costs less than decoding
// the analysis of every tool.
func (g *GatewayFunction) firstKeywords(ctx context.Context, c indexpub.CatalogCopy) *retrieve.KeywordTerms {
	if g.keywordsTried.Swap(true) {
		return nil
	}
	return g.readKeywords(ctx, c)
}

// readKeywords reads and decodes the keyword analysis published with the
// catalog copy c; nil (logged) when there is none or it cannot be used:
// the gateway then analyses the tools itself.
func (g *GatewayFunction) readKeywords(ctx context.Context, c indexpub.CatalogCopy) *retrieve.KeywordTerms {
	if c.KeywordsSHA256 == "" {
		g.log.Info("no keyword analysis published with the catalog copy; analysing every tool")
		return nil
	}
	if g.prefetch != nil {
		p, err := g.prefetch.Keywords(ctx, c.KeywordsSHA256)
		if err == nil {
			return p
		}
		if !errors.Is(err, indexpub.ErrNoPrefetch) {
			g.log.Warn("keyword analysis published with the catalog copy unusable; analysing every tool", "error", err)
			return nil
		}
	}
	b, err := indexpub.ReadKeywords(ctx, g.bucket, g.cfg.Prefix, c.KeywordsSHA256)
	if err == nil {
		var p *retrieve.KeywordTerms
		if p, err = retrieve.DecodeKeywordTerms(b); err == nil {
			return p
		}
	}
	g.log.Warn("keyword analysis published with the catalog copy unusable; analysing every tool", "error", err)
	return nil
}

type catalogPrefetch = indexpub.CatalogPrefetch[*retrieve.KeywordTerms]

// startPrefetch starts reading the catalog copy and the keyword analysis
// it names while the first load reads the index, so that the cold start
// does not fetch and decode them one after the other. It reads from the
// bucket directly: the index fetch time of ColdStart stays the index's.
func (g *GatewayFunction) startPrefetch(ctx context.Context) {
	g.prefetch = indexpub.PrefetchCatalog(ctx, g.bucket.Bucket, g.cfg.Prefix, retrieve.DecodeKeywordTerms)
}

// releasePrefetch drops what the prefetch holds once the first load is
// done: a cold start that did not take the copy (no usable index, or one
// the copy was not written for) must not keep a second catalog.
func (g *GatewayFunction) releasePrefetch() {
	<-g.follow.Loaded()
	g.prefetch.Release()
}

// readCatalog is indexpub.ReadCatalog, answered by the prefetch the
// first time when it read the copy of this index.
func (g *GatewayFunction) readCatalog(ctx context.Context, indexSHA, ifNoneMatch string) (indexpub.CatalogCopy, string, bool, error) {
	if g.prefetch != nil && ifNoneMatch == "" {
		c, etag, err := g.prefetch.Catalog(ctx, indexSHA)
		switch {
		case err == nil:
			return c, etag, true, nil
		case errors.Is(err, indexpub.ErrNoPrefetch), errors.Is(err, indexpub.ErrNotExist):
			// Not this index's copy, or none yet: ask again.
		default:
			g.log.Warn("prefetched catalog copy unusable; reading it again", "error", err)
		}
	}
	return indexpub.ReadCatalog(ctx, g.bucket, g.cfg.Prefix, indexSHA, ifNoneMatch)
}
