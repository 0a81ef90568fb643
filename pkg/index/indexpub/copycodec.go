package indexpub

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// The catalog copy is stored gzip-compressed in one of two encodings, told
// apart by their first bytes once uncompressed:
//
//   - JSON (CatalogCopy), written before the binary encoding existed and
//     still read;
//   - the binary encoding below, written now: a gateway decodes it about
//     ten times faster than the JSON (no reflection, no scanning for the
//     end of each value, every slice allocated at its final size), which
//     matters at a cold start with 100k tools.
//
// Binary encoding, version 1 (all numbers unsigned varints unless said;
// a string is its byte length then its bytes):
//
//	"toolrag-catalog\x00" magic, then version (1)
//	index_sha256, keywords_sha256                        strings
//	number of servers, then per server:
//	  id, title, description, status, last_error         strings
//	  synced_at                                          time
//	number of tools, then per tool:
//	  tool_id, server_name, tool_name, title, description strings
//	  input_schema, annotations                          strings (JSON, compacted)
//	  tool_type, permission_scope                        strings
//	  number of tags, then each tag                      strings
//	  status, content_hash                               strings
//	  updated_at                                         time
//
// Version 2 adds, after synced_at of each server and after updated_at of
// each tool, its extra (string, JSON compacted; catalog.Server.Extra and
// catalog.Tool.Extra). A gateway of the previous release refuses version 2
// as unsupported and reads the tools table instead, so a rollout serves
// every tool throughout.
//
// A time is 0 for the zero time, otherwise 1, the Unix seconds (zig-zag
// varint), the nanoseconds and the zone offset in seconds (zig-zag). The
// encoding ends with the last tool; anything after it is damage. The
// values are exactly those a JSON round trip gives (schemas compacted and
// HTML-escaped as encoding/json writes them, invalid UTF-8 replaced), so
// the two encodings decode to the same records.
const (
	copyMagic   = "toolrag-catalog\x00"
	copyVersion = 2
)

// encodeCopyBinary appends the binary encoding of c to dst.
func encodeCopyBinary(dst []byte, c CatalogCopy) ([]byte, error) {
	e := copyEncoder{b: append(dst, copyMagic...)}
	e.uv(copyVersion)
	e.str(c.IndexSHA256)
	e.str(c.KeywordsSHA256)
	e.uv(uint64(len(c.Servers)))
	for _, s := range c.Servers {
		e.str(s.ID)
		e.str(s.Title)
		e.str(s.Description)
		e.str(s.Status)
		e.str(s.LastError)
		e.time(s.SyncedAt)
		if err := e.raw(s.Extra); err != nil {
			return nil, fmt.Errorf("server %q: extra: %w", s.ID, err)
		}
	}
	e.uv(uint64(len(c.Tools)))
	for _, t := range c.Tools {
		e.str(t.ID)
		e.str(t.Server)
		e.str(t.Name)
		e.str(t.Title)
		e.str(t.Description)
		if err := e.raw(t.InputSchema); err != nil {
			return nil, fmt.Errorf("tool %q: input schema: %w", t.ID, err)
		}
		if err := e.raw(t.Annotations); err != nil {
			return nil, fmt.Errorf("tool %q: annotations: %w", t.ID, err)
		}
		e.str(t.ToolType)
		e.str(t.PermissionScope)
		e.uv(uint64(len(t.Tags)))
		for _, tag := range t.Tags {
			e.str(tag)
		}
		e.str(t.Status)
		e.str(t.ContentHash)
		e.time(t.UpdatedAt)
		if err := e.raw(t.Extra); err != nil {
			return nil, fmt.Errorf("tool %q: extra: %w", t.ID, err)
		}
	}
	return e.b, nil
}

type copyEncoder struct {
	b       []byte
	scratch bytes.Buffer
}

func (e *copyEncoder) uv(v uint64) { e.b = binary.AppendUvarint(e.b, v) }

func (e *copyEncoder) str(s string) {
	if !utf8.ValidString(s) {
		s = jsonString(s)
	}
	e.uv(uint64(len(s)))
	e.b = append(e.b, s...)
}

// raw appends a JSON value as encoding/json.Marshal writes a RawMessage:
// compacted, with <, > and & (and U+2028, U+2029) escaped. Empty stays
// empty (omitted in JSON, nil once decoded).
func (e *copyEncoder) raw(m json.RawMessage) error {
	if len(m) == 0 {
		e.uv(0)
		return nil
	}
	e.scratch.Reset()
	if err := json.Compact(&e.scratch, m); err != nil {
		return err
	}
	var esc bytes.Buffer
	json.HTMLEscape(&esc, e.scratch.Bytes())
	e.uv(uint64(esc.Len()))
	e.b = append(e.b, esc.Bytes()...)
	return nil
}

func (e *copyEncoder) time(t time.Time) {
	if t.IsZero() {
		e.uv(0)
		return
	}
	_, off := t.Zone()
	e.uv(1)
	e.b = binary.AppendVarint(e.b, t.Unix())
	e.uv(uint64(t.Nanosecond()))
	e.b = binary.AppendVarint(e.b, int64(off))
}

// jsonString returns s as a JSON round trip gives it back (each invalid
// UTF-8 byte replaced by U+FFFD).
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	var out string
	_ = json.Unmarshal(b, &out)
	return out
}

// Limits of the decoder: a damaged length or count must not make it
// allocate more than the damage can justify.
const (
	maxCopyString  = 64 << 20 // bytes of one string
	maxCopyItems   = 1 << 26  // servers, tools or tags of one tool
	copyPrealloc   = 1 << 18  // items allocated ahead of reading them
	copyInternSize = 256      // distinct short values shared between records
)

// decodeCopyBinary decodes the binary encoding from r, which must be
// positioned just after the magic, up to its end (r must then be at EOF).
func decodeCopyBinary(r *bufio.Reader, header func(indexSHA, keywordsSHA string)) (CatalogCopy, error) {
	d := copyDecoder{r: r, intern: make(map[string]string, 64)}
	var c CatalogCopy
	version := d.uv()
	if d.err == nil && (version < 1 || version > copyVersion) {
		return c, fmt.Errorf("catalog copy encoding version %d is not supported (this gateway reads versions 1 to %d): %w", version, copyVersion, errors.ErrUnsupported)
	}
	c.IndexSHA256 = d.str()
	c.KeywordsSHA256 = d.str()
	if d.err == nil && header != nil {
		header(c.IndexSHA256, c.KeywordsSHA256)
	}
	c.Servers = decodeList(&d, d.count(), func() catalog.Server { return d.server(version) })
	c.Tools = decodeList(&d, d.count(), func() catalog.Tool { return d.tool(version) })
	if d.err != nil {
		return CatalogCopy{}, d.err
	}
	if _, err := r.ReadByte(); err != io.EOF {
		if err == nil {
			err = errors.New("unexpected bytes after the last tool")
		}
		return CatalogCopy{}, err
	}
	return c, nil
}

type copyDecoder struct {
	r      *bufio.Reader
	err    error
	intern map[string]string
}

// decodeList reads n items with item, stopping at the first error; the
// slice is allocated ahead for at most copyPrealloc of them.
func decodeList[T any](d *copyDecoder, n int, item func() T) []T {
	out := make([]T, 0, min(n, copyPrealloc))
	for range n {
		if d.err != nil {
			break
		}
		out = append(out, item())
	}
	return out
}

func (d *copyDecoder) server(version uint64) catalog.Server {
	var s catalog.Server
	s.ID = d.str()
	s.Title = d.str()
	s.Description = d.str()
	s.Status = d.short()
	s.LastError = d.str()
	s.SyncedAt = d.time()
	if version >= 2 {
		s.Extra = d.bytes()
	}
	return s
}

func (d *copyDecoder) tool(version uint64) catalog.Tool {
	var t catalog.Tool
	t.ID = d.str()
	t.Server = d.short()
	t.Name = d.str()
	t.Title = d.str()
	t.Description = d.str()
	t.InputSchema = d.bytes()
	t.Annotations = d.bytes()
	t.ToolType = d.short()
	t.PermissionScope = d.short()
	if k := d.count(); k > 0 {
		t.Tags = decodeList(d, k, d.short)
	}
	t.Status = d.short()
	t.ContentHash = d.str()
	t.UpdatedAt = d.time()
	if version >= 2 {
		t.Extra = d.bytes()
	}
	return t
}

func (d *copyDecoder) fail(err error) {
	if d.err == nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		d.err = err
	}
}

func (d *copyDecoder) uv() uint64 {
	if d.err != nil {
		return 0
	}
	v, err := binary.ReadUvarint(d.r)
	if err != nil {
		d.fail(err)
	}
	return v
}

func (d *copyDecoder) count() int {
	v := d.uv()
	if v > maxCopyItems {
		d.fail(fmt.Errorf("a count of %d is past the limit", v))
		return 0
	}
	return int(v)
}

// next returns the next n bytes: a view into the reader's buffer (valid
// until the next read) when they fit in it, else a fresh slice (owned).
func (d *copyDecoder) next(n int) (p []byte, owned bool) {
	if d.err != nil {
		return nil, false
	}
	if n > maxCopyString {
		d.fail(fmt.Errorf("a string of %d bytes is past the limit", n))
		return nil, false
	}
	if n <= d.r.Size() {
		p, err := d.r.Peek(n)
		if err != nil {
			d.fail(err)
			return nil, false
		}
		_, _ = d.r.Discard(n)
		return p, false
	}
	p = make([]byte, n)
	if _, err := io.ReadFull(d.r, p); err != nil {
		d.fail(err)
		return nil, false
	}
	return p, true
}

func (d *copyDecoder) str() string {
	n := d.uv()
	if n == 0 {
		return ""
	}
	p, owned := d.next(int(min(n, maxCopyString+1)))
	if owned {
		return unsafe.String(&p[0], len(p)) // p is referenced nowhere else
	}
	return string(p)
}

// short reads a string that many records share (a server id, a status, a
// tool type): equal values share one allocation.
func (d *copyDecoder) short() string {
	n := d.uv()
	if n == 0 {
		return ""
	}
	if n > 64 {
		p, owned := d.next(int(min(n, maxCopyString+1)))
		if owned {
			return unsafe.String(&p[0], len(p))
		}
		return string(p)
	}
	p, _ := d.next(int(n))
	if d.err != nil {
		return ""
	}
	if s, ok := d.intern[string(p)]; ok { // no allocation for the lookup
		return s
	}
	s := string(p)
	if len(d.intern) < copyInternSize {
		d.intern[s] = s
	}
	return s
}

// bytes reads a string as a JSON value (nil when empty).
func (d *copyDecoder) bytes() json.RawMessage {
	n := d.uv()
	if n == 0 {
		return nil
	}
	p, owned := d.next(int(min(n, maxCopyString+1)))
	if owned || d.err != nil {
		return p
	}
	return bytes.Clone(p)
}

func (d *copyDecoder) time() time.Time {
	switch d.uv() {
	case 0:
		return time.Time{}
	case 1:
	default:
		d.fail(errors.New("bad time marker"))
		return time.Time{}
	}
	sec, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail(err)
		return time.Time{}
	}
	nsec := d.uv()
	off, err := binary.ReadVarint(d.r)
	if err != nil {
		d.fail(err)
		return time.Time{}
	}
	if nsec >= 1e9 || off <= -86400 || off >= 86400 {
		d.fail(errors.New("time out of range"))
		return time.Time{}
	}
	t := time.Unix(sec, int64(nsec))
	if off == 0 {
		return t.UTC()
	}
	// As encoding/json decodes an RFC 3339 time with this offset.
	return t.In(zoneAt(t, int(off)))
}

// zoneAt is the location time.Parse gives a time with this offset: Local
// when Local has that offset then, else a fixed zone.
func zoneAt(t time.Time, off int) *time.Location {
	if _, lo := t.In(time.Local).Zone(); lo == off {
		return time.Local
	}
	return time.FixedZone("", off)
}
