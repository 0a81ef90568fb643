package gateway

// Large results as links. A tool result whose JSON is larger than the
// inline limit (BigResults.InlineBytes) is not refused: each large block
// (text, image, audio, an embedded resource, the structured content) is
// stored in the result store with the caller as its owner and replaced by
// a short preview and a resource_link gateway://_results/<id>. The
// gateway's own namespace cannot clash with a server's (server ids never
// start with "_"). resources/read of such a link serves the stored bytes
// to the same principal only, while its policy still grants the tool;
// anyone else gets "resource not found". When the store can sign, the
// link's _meta["io.toolrag/download"] carries a short-lived signed URL
// bound to the owner (an S3 presigned GET on AWS, a gateway URL locally),
// for results too large for one response (Lambda's 6 MB).

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/resultstore"
)

// ResultURIPrefix is the URI prefix of stored results.
const ResultURIPrefix = "gateway://_results/"

// DownloadMeta is the _meta key of a stored result's resource_link that
// carries its signed download URL ({"url", "expiresAt"}).
const DownloadMeta = "io.toolrag/download"

// BigResults tunes large results (zero values select the defaults).
type BigResults struct {
	// InlineBytes: a result whose JSON is larger is stored and linked
	// (MCP_GATEWAY_MAX_RESULT_BYTES). 0: results are never stored.
	InlineBytes int64
	// PreviewBytes of a stored text stay inline (default 2048).
	PreviewBytes int
	// TTL is how long a stored result can be read (default 1 h).
	TTL time.Duration
	// URLTTL is how long a signed download URL is valid (default 15 min).
	URLTTL time.Duration
	// ReadBytes bounds the body resources/read returns (0: no bound); a
	// larger result is downloaded from its signed URL.
	ReadBytes int64
}

func (b BigResults) preview() int {
	if b.PreviewBytes > 0 {
		return b.PreviewBytes
	}
	return 2048
}

func (b BigResults) ttl() time.Duration {
	if b.TTL > 0 {
		return b.TTL
	}
	return time.Hour
}

func (b BigResults) urlTTL() time.Duration {
	if b.URLTTL > 0 {
		return b.URLTTL
	}
	return 15 * time.Minute
}

// owner is the principal a stored result belongs to.
func owner(ctx context.Context, pol policy.Policy) string {
	if p, ok := auth.PrincipalFrom(ctx); ok {
		return p
	}
	return "key:" + pol.KeyID
}

// block is one part of a result that may be stored.
type block struct {
	index  int // in res.Content; -1: the structured content
	size   int // its bytes in the result's JSON (about)
	body   []byte
	mime   string
	binary bool
	text   bool // a text block: a preview stays inline
}

// blockOf describes content c, or ok=false for content that stays (links).
func blockOf(c mcp.Content) (b block, ok bool) {
	switch v := c.(type) {
	case *mcp.TextContent:
		return blockOf(*v)
	case *mcp.ImageContent:
		return blockOf(*v)
	case *mcp.AudioContent:
		return blockOf(*v)
	case *mcp.EmbeddedResource:
		return blockOf(*v)
	case mcp.TextContent:
		return block{size: len(v.Text), body: []byte(v.Text), mime: "text/plain; charset=utf-8", text: true}, true
	case mcp.ImageContent:
		return binaryBlock(v.Data, v.MIMEType)
	case mcp.AudioContent:
		return binaryBlock(v.Data, v.MIMEType)
	case mcp.EmbeddedResource:
		switch r := v.Resource.(type) {
		case *mcp.TextResourceContents:
			return block{size: len(r.Text), body: []byte(r.Text), mime: r.MIMEType}, true
		case mcp.TextResourceContents:
			return block{size: len(r.Text), body: []byte(r.Text), mime: r.MIMEType}, true
		case *mcp.BlobResourceContents:
			return binaryBlock(r.Blob, r.MIMEType)
		case mcp.BlobResourceContents:
			return binaryBlock(r.Blob, r.MIMEType)
		}
	}
	return block{}, false
}

func binaryBlock(b64, mime string) (block, bool) {
	raw, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return block{}, false // stays as it is
	}
	return block{size: len(b64), body: raw, mime: mime, binary: true}, true
}

// spill stores the large blocks of res, the result of tool srv/name, when
// its JSON is over the inline limit, and returns the result the client
// gets. An error is worded for the agent.
func (g *Server) spill(ctx context.Context, pol policy.Policy, srv, name string, res *mcp.CallToolResult) (*mcp.CallToolResult, error) {
	lim := g.cfg.BigResults.InlineBytes
	if g.cfg.Results == nil || lim <= 0 || res == nil {
		return res, nil
	}
	// A cheap bound first: JSON escaping grows a text at most 6-fold
	// (\u003c), so most results are known to fit without encoding them.
	approx := 0
	var blocks []block
	for i, c := range res.Content {
		if b, ok := blockOf(c); ok {
			b.index = i
			approx += b.size
			blocks = append(blocks, b)
		}
	}
	var structured []byte
	if len(res.RawStructuredContent) > 0 {
		structured = res.RawStructuredContent
	} else if res.StructuredContent != nil {
		structured, _ = json.Marshal(res.StructuredContent)
	}
	approx += len(structured)
	if int64(approx)*6+4096 < lim {
		return res, nil
	}
	// The JSON is at least as large as the bytes it carries: only a
	// result between the two bounds is encoded to know.
	size := int64(approx)
	if size <= lim {
		raw, err := json.Marshal(res)
		if err != nil || int64(len(raw)) <= lim {
			return res, nil
		}
		size = int64(len(raw))
	}
	if len(structured) > 0 {
		blocks = append(blocks, block{index: -1, size: len(structured), body: structured, mime: "application/json"})
	}
	// The largest blocks go first, until what stays inline fits.
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].size > blocks[j].size })
	over := size - lim
	out := *res
	out.Content = append([]mcp.Content(nil), res.Content...)
	extra := map[int][]mcp.Content{}
	for _, b := range blocks {
		if over <= 0 {
			break
		}
		link, err := g.storeBlock(ctx, pol, srv, name, b)
		if err != nil {
			g.log.Warn("a large result could not be stored", "server", srv, "tool", name, "error", err)
			return nil, fmt.Errorf("the result of %d bytes is larger than the %d-byte inline limit (MCP_GATEWAY_MAX_RESULT_BYTES) and could not be stored for reading through a link: %w", size, lim, err)
		}
		parts := []mcp.Content{}
		if b.text {
			parts = append(parts, mcp.NewTextContent(preview(string(b.body), g.cfg.BigResults.preview(), link.URI)))
		}
		parts = append(parts, link)
		if b.index < 0 {
			out.StructuredContent, out.RawStructuredContent = nil, nil
			extra[len(res.Content)] = parts
		} else {
			extra[b.index] = parts
			out.Content[b.index] = nil
		}
		// The JSON escaping of a text can make it larger than its bytes.
		over -= int64(max(b.size, len(b.body)))
	}
	content := make([]mcp.Content, 0, len(out.Content)+len(extra))
	for i := 0; i <= len(out.Content); i++ {
		if i < len(out.Content) && out.Content[i] != nil {
			content = append(content, out.Content[i])
		}
		content = append(content, extra[i]...)
	}
	out.Content = content
	g.Metrics.ResultsStored.Add(int64(len(extra)))
	return &out, nil
}

// storeBlock stores one block and returns its link.
func (g *Server) storeBlock(ctx context.Context, pol policy.Policy, srv, name string, b block) (mcp.ResourceLink, error) {
	rec := resultstore.Record{
		ID: resultstore.NewID(), Owner: owner(ctx, pol), Server: srv, Tool: name,
		MIMEType: b.mime, Binary: b.binary, Size: int64(len(b.body)),
		Expires: time.Now().Add(g.cfg.BigResults.ttl()).UTC().Truncate(time.Second),
	}
	if err := g.cfg.Results.Put(ctx, rec, b.body); err != nil {
		return mcp.ResourceLink{}, err
	}
	g.Metrics.ResultBytesStored.Add(rec.Size)
	what := "result"
	if b.index < 0 {
		what = "structured content"
	}
	link := mcp.NewResourceLink(ResultURIPrefix+rec.ID, fmt.Sprintf("%s__%s %s", srv, name, what),
		fmt.Sprintf("The full %s (%d bytes), too large to return inline; read it with resources/read until %s.", what, rec.Size, rec.Expires.Format(time.RFC3339)),
		b.mime)
	size := rec.Size
	link.Size = &size
	d, ok, err := g.cfg.Results.Sign(ctx, rec, g.cfg.BigResults.urlTTL())
	if err != nil {
		g.log.Warn("no download URL for a stored result", "error", err)
	} else if ok {
		link.Meta = &mcp.Meta{AdditionalFields: map[string]any{DownloadMeta: d}}
	}
	return link, nil
}

// preview is the first n bytes of text (on a rune boundary) and a line
// that says where the rest is.
func preview(text string, n int, uri string) string {
	if len(text) <= n {
		return text
	}
	cut := n
	for cut > 0 && !utf8.RuneStart(text[cut]) {
		cut--
	}
	return fmt.Sprintf("%s\n… [%d more bytes: the full text is the resource %s]", text[:cut], len(text)-cut, uri)
}

// readResult serves resources/read of a stored result: to its owner only,
// while the owner's policy still grants the tool it came from.
func (g *Server) readResult(ctx context.Context, uri, id string) ([]mcp.ResourceContents, error) {
	notFound := fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	pol, ok := policy.FromContext(ctx)
	if !ok || g.cfg.Results == nil || !resultstore.ValidID(id) {
		return nil, notFound
	}
	rec, body, err := g.cfg.Results.Get(ctx, id)
	if errors.Is(err, resultstore.ErrNotFound) {
		return nil, notFound
	}
	if err != nil {
		g.log.Warn("a stored result could not be read", "error", err)
		return nil, fmt.Errorf("read %s: the result store is unavailable; try again", uri)
	}
	if rec.Owner != owner(ctx, pol) || !pol.AllowsTool(rec.Server, rec.Tool) {
		return nil, notFound
	}
	g.Metrics.ResultsRead.Add(1)
	size := int64(len(body))
	if rec.Binary {
		size = size * 4 / 3 // base64
	}
	if lim := g.cfg.BigResults.ReadBytes; lim > 0 && size > lim {
		return nil, fmt.Errorf("read %s: the result is %d bytes, more than one response of this runtime can carry; download it from the signed URL in the resource_link's _meta[%q]", uri, len(body), DownloadMeta)
	}
	if rec.Binary {
		return []mcp.ResourceContents{mcp.BlobResourceContents{URI: uri, MIMEType: rec.MIMEType, Blob: base64.StdEncoding.EncodeToString(body)}}, nil
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: uri, MIMEType: rec.MIMEType, Text: string(body)}}, nil
}

// resultID returns the id of a stored result's URI.
func resultID(uri string) (string, bool) {
	id, ok := strings.CutPrefix(uri, ResultURIPrefix)
	return id, ok
}
