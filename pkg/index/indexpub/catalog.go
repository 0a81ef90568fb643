package indexpub

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// CatalogKey is the name, under the index prefix, of the catalog copy the
// sync function writes before each index it publishes becomes current (and
// again after every sync that published nothing). A gateway reads it
// instead of scanning the tools table (one GET, or a conditional GET
// answered 304, instead of a Scan of every item, twice), but only when it
// was written for the index the gateway loaded; otherwise it scans the
// table. (The name is from the JSON copies written first; the copy is now
// written in a binary encoding, and JSON copies are still read.)
const CatalogKey = "catalog.json.gz"

// CatalogWriter writes the catalog copy of an index just before the index
// is published (indexer.Config.BeforeSwitch), so that a gateway that sees
// the new pointer finds the copy for it. A copy that cannot be written is
// logged and reported, and the index is published anyway: gateways then
// read the tools table.
type CatalogWriter struct {
	Tools  catalog.Reader
	Bucket Bucket
	Prefix string
	Log    *slog.Logger
	// Keywords, when set, returns the keyword analysis of the catalog,
	// published with the copy (see WriteCatalog); nil publishes none.
	Keywords KeywordsFunc

	mu   sync.Mutex
	done bool  // a copy was written, or failed, since reset
	err  error // why it was not written
}

// BeforeSwitch writes the copy of the index about to be published.
func (c *CatalogWriter) BeforeSwitch(ctx context.Context, next Pointer) error {
	c.record(next.SHA256, PublishCatalog(ctx, c.Tools, c.Bucket, c.Prefix, next.SHA256, c.keywords()))
	return nil
}

// Refresh writes the copy of the published index unless one was written
// (or failed) since reset: a sync that published nothing may still have
// changed the table (stale marks, a build that failed).
func (c *CatalogWriter) Refresh(ctx context.Context) {
	c.mu.Lock()
	done := c.done
	c.mu.Unlock()
	if done {
		return
	}
	ptr, err := ReadPointer(ctx, c.Bucket, c.Prefix)
	switch {
	case errors.Is(err, ErrNotExist):
	case err != nil:
		c.record("", fmt.Errorf("read the index pointer: %w", err))
	default:
		c.record(ptr.SHA256, PublishCatalog(ctx, c.Tools, c.Bucket, c.Prefix, ptr.SHA256, c.keywords()))
	}
}

// keywords is c.Keywords logging its failures.
func (c *CatalogWriter) keywords() KeywordsFunc {
	if c.Keywords == nil {
		return nil
	}
	return func(ctx context.Context, tools []catalog.Tool, servers []catalog.Server) ([]byte, error) {
		b, err := c.Keywords(ctx, tools, servers)
		if err != nil {
			c.Log.Warn("keyword analysis not published with the catalog copy; gateways analyse the tools themselves", "error", err)
		}
		return b, err
	}
}

func (c *CatalogWriter) record(sha string, err error) {
	if err != nil {
		c.Log.Warn("catalog copy not written; gateways read the tools table instead", "index", sha, "error", err)
	}
	c.mu.Lock()
	c.done, c.err = true, err
	c.mu.Unlock()
}

// Reset forgets the last copy written.
func (c *CatalogWriter) Reset() {
	c.mu.Lock()
	c.done, c.err = false, nil
	c.mu.Unlock()
}

// Err says why the last copy since reset was not written.
func (c *CatalogWriter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// CatalogCopy is the content of CatalogKey (gzip-compressed; the binary
// encoding of copycodec.go, or JSON from earlier versions). It
// holds no time of its own and no server's SyncedAt (set by every sync), so
// that a sync that changed nothing produces the same bytes and does not
// write them (copies written before that have a written_at, ignored).
type CatalogCopy struct {
	IndexSHA256 string `json:"index_sha256"` // the index published with it
	// KeywordsSHA256 names the keyword analysis of these tools published
	// with the copy (KeywordsKey); empty when none was.
	KeywordsSHA256 string           `json:"keywords_sha256,omitempty"`
	Tools          []catalog.Tool   `json:"tools"`
	Servers        []catalog.Server `json:"servers"`
}

// KeywordsFunc returns the keyword analysis of a catalog, as bytes that the
// same content always encodes to (see retrieve.KeywordIndex.EncodeTerms).
type KeywordsFunc func(ctx context.Context, tools []catalog.Tool, servers []catalog.Server) ([]byte, error)

// PublishCatalog reads the tools table and stores it as the catalog copy
// of the index with hash indexSHA, with the keyword analysis kw returns
// (nil: none). When kw fails, the copy is published
// without an analysis (gateways then analyse the tools themselves).
func PublishCatalog(ctx context.Context, tools catalog.Reader, b Bucket, prefix, indexSHA string, kw KeywordsFunc) error {
	c := catalog.NewCopy(tools)
	if err := c.Load(ctx); err != nil {
		return err
	}
	t, s, _ := c.Content()
	var terms []byte
	if kw != nil {
		var err error
		if terms, err = kw(ctx, t, s); err != nil {
			terms = nil
		}
	}
	return WriteCatalog(ctx, b, prefix, indexSHA, t, s, terms)
}

// KeywordsKey returns the key, under the index prefix, of the keyword
// analysis whose (uncompressed) content has the given SHA-256: content
// addressed, like the index blobs, and pruned with them.
func KeywordsKey(sha string) string { return "indexes/keywords-" + sha + ".bin.gz" }

// WriteCatalog stores the catalog copy for the index with the given
// hash, unless the stored copy has the same bytes (Unchanged: one HEAD
// request on S3), and keywords, the keyword analysis of tools (nil: none),
// at its content-addressed key (unless it is already there: one HEAD
// request) before the copy that names it.
func WriteCatalog(ctx context.Context, b Bucket, prefix, indexSHA string, tools []catalog.Tool, servers []catalog.Server, keywords []byte) error {
	kwSHA := ""
	if keywords != nil {
		var err error
		if kwSHA, err = writeKeywords(ctx, b, prefix, keywords); err != nil {
			return err
		}
	}
	servers = slices.Clone(servers)
	for i := range servers {
		servers[i].SyncedAt = time.Time{}
	}
	raw, err := encodeCopyBinary(nil, CatalogCopy{IndexSHA256: indexSHA, KeywordsSHA256: kwSHA, Tools: tools, Servers: servers})
	if err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	var buf bytes.Buffer
	buf.Grow(len(raw) / 4)
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed) // no name, no time: the same content gives the same bytes
	if _, err := zw.Write(raw); err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("encode the catalog copy: %w", err)
	}
	if Unchanged(ctx, b, prefix+CatalogKey, buf.Bytes()) {
		return nil
	}
	if _, err := b.Put(ctx, prefix+CatalogKey, buf.Bytes(), Cond{}); err != nil {
		return fmt.Errorf("write the catalog copy: %w", err)
	}
	return nil
}

// ReadCatalog returns the catalog copy and its ETag if it was written
// for the index with hash indexSHA; ok is false otherwise (missing, another
// index, unreadable, or unchanged since ifNoneMatch: an error wrapping
// ErrNotModified), and err says why.
func ReadCatalog(ctx context.Context, b Bucket, prefix, indexSHA, ifNoneMatch string) (c CatalogCopy, etag string, ok bool, err error) {
	body, etag, err := b.Get(ctx, prefix+CatalogKey, ifNoneMatch)
	if err != nil {
		return c, "", false, err
	}
	if c, err = decodeCatalog(body, nil); err != nil {
		return c, "", false, fmt.Errorf("catalog copy %s%s: %w", prefix, CatalogKey, err)
	}
	return c, etag, c.IndexSHA256 == indexSHA, nil
}

// decodeCatalog decodes a stored catalog copy: gzip-compressed, the binary
// encoding or (written by earlier versions) JSON. Damage anywhere,
// including the gzip checksum at its end, is an error. With the binary
// encoding, header (when not nil) is called with the copy's index and
// keyword analysis hashes as soon as they are read, before the tools are.
func decodeCatalog(body []byte, header func(indexSHA, keywordsSHA string)) (CatalogCopy, error) {
	var c CatalogCopy
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return c, fmt.Errorf("not gzip: %w", err)
	}
	br := bufio.NewReaderSize(zr, 64<<10)
	if head, _ := br.Peek(len(copyMagic)); string(head) == copyMagic {
		_, _ = br.Discard(len(copyMagic))
		if c, err = decodeCopyBinary(br, header); err != nil {
			return c, fmt.Errorf("damaged: %w", err)
		}
		return c, nil
	}
	if err := json.NewDecoder(br).Decode(&c); err != nil {
		return c, fmt.Errorf("does not decode: %w", err)
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return c, fmt.Errorf("damaged: %w", err)
	}
	return c, nil
}

func writeKeywords(ctx context.Context, b Bucket, prefix string, keywords []byte) (string, error) {
	sum := sha256.Sum256(keywords)
	sha := hex.EncodeToString(sum[:])
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	if _, err := zw.Write(keywords); err != nil {
		return "", fmt.Errorf("compress the keyword analysis: %w", err)
	}
	if err := zw.Close(); err != nil {
		return "", fmt.Errorf("compress the keyword analysis: %w", err)
	}
	key := prefix + KeywordsKey(sha)
	if Unchanged(ctx, b, key, buf.Bytes()) {
		return sha, nil
	}
	if _, err := b.Put(ctx, key, buf.Bytes(), Cond{}); err != nil {
		return "", fmt.Errorf("write the keyword analysis %s: %w", key, err)
	}
	return sha, nil
}

// ReadKeywords returns the keyword analysis published with a catalog copy
// (CatalogCopy.KeywordsSHA256), uncompressed. A missing, damaged or
// mismatching blob is an error: the caller analyses the tools instead.
func ReadKeywords(ctx context.Context, b Bucket, prefix, sha string) ([]byte, error) {
	key := prefix + KeywordsKey(sha)
	body, _, err := b.Get(ctx, key, "")
	if err != nil {
		return nil, fmt.Errorf("read the keyword analysis %s: %w", key, err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("keyword analysis %s is not gzip: %w", key, err)
	}
	out, err := readAllSized(zr, gzipSize(body)) // gzip's checksum: damage is an error
	if err != nil {
		return nil, fmt.Errorf("keyword analysis %s is damaged: %w", key, err)
	}
	if sum := sha256.Sum256(out); hex.EncodeToString(sum[:]) != sha {
		return nil, fmt.Errorf("keyword analysis %s does not have the content its name says", key)
	}
	return out, nil
}

// gzipSize returns the uncompressed size a gzip stream states in its
// trailer (modulo 2^32, and only a hint: damage is found by reading),
// bounded by what deflate can expand the body to.
func gzipSize(body []byte) int {
	if len(body) < 18 {
		return 0
	}
	n := int(binary.LittleEndian.Uint32(body[len(body)-4:]))
	return min(n, 1032*len(body))
}

// readAllSized is io.ReadAll into a buffer of the expected size (plus one
// byte to see the end), so that a large body is not copied while the
// buffer doubles.
func readAllSized(r io.Reader, size int) ([]byte, error) {
	buf := make([]byte, 0, size+1)
	for {
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)] // grow as io.ReadAll does
		}
	}
}
