package awsrt

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/indexpub"
)

// CatalogKey is the name, under the index prefix, of the catalog copy the
// sync function writes before each index it publishes becomes current (and
// again after every sync that published nothing). A gateway reads it
// instead of scanning the tools table (one GET, or a conditional GET
// answered 304, instead of a Scan of every item, twice), but only when it
// was written for the index the gateway loaded; otherwise it scans the
// table.
const CatalogKey = "catalog.json.gz"

// copier writes the catalog copy of an index just before the index is
// published (indexer.Config.BeforeSwitch), so that a gateway that sees the
// new pointer finds the copy for it. A copy that cannot be written is
// logged and reported, and the index is published anyway: gateways then
// read the tools table.
type copier struct {
	tools  toolReader
	bucket indexpub.Bucket
	prefix string
	log    *slog.Logger

	mu   sync.Mutex
	done bool  // a copy was written, or failed, since reset
	err  error // why it was not written
}

func (c *copier) beforeSwitch(ctx context.Context, next indexpub.Pointer) error {
	c.record(next.SHA256, publishCatalogCopy(ctx, c.tools, c.bucket, c.prefix, next.SHA256))
	return nil
}

// refresh writes the copy of the published index unless one was written
// (or failed) since reset: a sync that published nothing may still have
// changed the table (stale marks, a build that failed).
func (c *copier) refresh(ctx context.Context) {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done {
		return
	}
	ptr, err := indexpub.ReadPointer(ctx, c.bucket, c.prefix)
	switch {
	case errors.Is(err, indexpub.ErrNotExist):
	case err != nil:
		c.record("", fmt.Errorf("read the index pointer: %w", err))
	default:
		c.record(ptr.SHA256, publishCatalogCopy(ctx, c.tools, c.bucket, c.prefix, ptr.SHA256))
	}
}

func (c *copier) record(sha string, err error) {
	if err != nil {
		c.log.Warn("catalog copy not written; gateways read the tools table instead", "index", sha, "error", err)
	}
	c.mu.Lock()
	c.done, c.err = true, err
	c.mu.Unlock()
}

// reset forgets the last copy written.
func (c *copier) reset() {
	c.mu.Lock()
	c.done, c.err = false, nil
	c.mu.Unlock()
}

// lastErr says why the last copy since reset was not written.
func (c *copier) lastErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// catalogCopy is the content of CatalogKey (gzip-compressed JSON). It
// holds no time of its own and no server's SyncedAt (set by every sync), so
// that a sync that changed nothing produces the same bytes and does not
// write them (copies written before that have a written_at, ignored).
type catalogCopy struct {
	IndexSHA256 string           `json:"index_sha256"` // the index published with it
	Tools       []catalog.Tool   `json:"tools"`
	Servers     []catalog.Server `json:"servers"`
}

// publishCatalogCopy reads the tools table and stores it as the catalog
// copy of the index with hash indexSHA.
func publishCatalogCopy(ctx context.Context, tools toolReader, b indexpub.Bucket, prefix, indexSHA string) error {
	snap := &snapshot{store: tools}
	if err := snap.load(ctx); err != nil {
		return err
	}
	return writeCatalogCopy(ctx, b, prefix, indexSHA, snap.tools, snap.servers)
}

// writeCatalogCopy stores the catalog copy for the index with the given
// hash, unless the stored copy has the same bytes (indexpub.Unchanged: one
// HEAD request on S3).
func writeCatalogCopy(ctx context.Context, b indexpub.Bucket, prefix, indexSHA string, tools []catalog.Tool, servers []catalog.Server) error {
	servers = slices.Clone(servers)
	for i := range servers {
		servers[i].SyncedAt = time.Time{}
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // no name, no time: the same content gives the same bytes
	if err := json.NewEncoder(zw).Encode(catalogCopy{IndexSHA256: indexSHA, Tools: tools, Servers: servers}); err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	if indexpub.Unchanged(ctx, b, prefix+CatalogKey, buf.Bytes()) {
		return nil
	}
	if _, err := b.Put(ctx, prefix+CatalogKey, buf.Bytes(), indexpub.Cond{}); err != nil {
		return fmt.Errorf("write the catalog copy: %w", err)
	}
	return nil
}

// readCatalogCopy returns the catalog copy and its ETag if it was written
// for the index with hash indexSHA; ok is false otherwise (missing, another
// index, unreadable, or unchanged since ifNoneMatch: an error wrapping
// indexpub.ErrNotModified), and err says why.
func readCatalogCopy(ctx context.Context, b indexpub.Bucket, prefix, indexSHA, ifNoneMatch string) (c catalogCopy, etag string, ok bool, err error) {
	body, etag, err := b.Get(ctx, prefix+CatalogKey, ifNoneMatch)
	if err != nil {
		return c, "", false, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return c, "", false, fmt.Errorf("catalog copy %s%s is not gzip: %w", prefix, CatalogKey, err)
	}
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		return c, "", false, fmt.Errorf("catalog copy %s%s does not decode: %w", prefix, CatalogKey, err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return c, "", false, fmt.Errorf("catalog copy %s%s is damaged: %w", prefix, CatalogKey, err)
	}
	return c, etag, c.IndexSHA256 == indexSHA, nil
}
