package awsrt

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/indexpub"
)

// CatalogKey is the name, under the index prefix, of the catalog copy the
// sync function writes next to each index it publishes. A cold gateway
// reads it instead of scanning the tools table (one GET instead of a Scan
// of every item, twice), but only when it was written for the index the
// gateway loaded; otherwise it scans the table as before.
const CatalogKey = "catalog.json.gz"

// catalogCopy is the content of CatalogKey (gzip-compressed JSON).
type catalogCopy struct {
	IndexSHA256 string           `json:"index_sha256"` // the index published with it
	WrittenAt   time.Time        `json:"written_at"`
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
// hash.
func writeCatalogCopy(ctx context.Context, b indexpub.Bucket, prefix, indexSHA string, tools []catalog.Tool, servers []catalog.Server) error {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if err := json.NewEncoder(zw).Encode(catalogCopy{IndexSHA256: indexSHA, WrittenAt: time.Now().UTC(), Tools: tools, Servers: servers}); err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	if _, err := b.Put(ctx, prefix+CatalogKey, buf.Bytes(), indexpub.Cond{}); err != nil {
		return fmt.Errorf("write the catalog copy: %w", err)
	}
	return nil
}

// readCatalogCopy returns the catalog copy if it was written for the index
// with hash indexSHA; ok is false otherwise (missing, another index,
// unreadable), and err says why when it is worth logging.
func readCatalogCopy(ctx context.Context, b indexpub.Bucket, prefix, indexSHA string) (c catalogCopy, ok bool, err error) {
	body, _, err := b.Get(ctx, prefix+CatalogKey, "")
	if err != nil {
		return c, false, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return c, false, fmt.Errorf("catalog copy %s%s is not gzip: %w", prefix, CatalogKey, err)
	}
	if err := json.NewDecoder(zr).Decode(&c); err != nil {
		return c, false, fmt.Errorf("catalog copy %s%s does not decode: %w", prefix, CatalogKey, err)
	}
	if _, err := io.Copy(io.Discard, zr); err != nil {
		return c, false, fmt.Errorf("catalog copy %s%s is damaged: %w", prefix, CatalogKey, err)
	}
	return c, c.IndexSHA256 == indexSHA, nil
}
