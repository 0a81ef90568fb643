package indexpub

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// copyFixture is a catalog with every field in use and the values whose
// JSON round trip is not the identity: schemas with spaces and <, > and &,
// invalid UTF-8, times in other zones and with nanoseconds, empty and nil
// slices.
func copyFixture() ([]catalog.Tool, []catalog.Server) {
	servers := []catalog.Server{
		{ID: "github", Title: "GitHub", Description: "Repos & <issues>", Status: catalog.StatusActive},
		{ID: "jira", Status: catalog.StatusStale, LastError: "dial tcp: refused\xff", SyncedAt: time.Date(2026, 1, 2, 3, 4, 5, 6, time.FixedZone("X", 3600))},
	}
	tools := []catalog.Tool{
		{
			ID: "github__create_issue", Server: "github", Name: "create_issue", Title: "Create issue",
			Description: "Creates an issue.\nUse <b>&</b> \u2028 carefully.",
			InputSchema: json.RawMessage("{ \"type\": \"object\",\n \"properties\": {\"title\": {\"type\": \"string\", \"pattern\": \"<[a-z]+>&\"}} }"),
			Annotations: json.RawMessage(`{"readOnlyHint": false}`),
			ToolType:    "action", PermissionScope: "write", Tags: []string{"issues", "write"},
			Status: catalog.StatusActive, ContentHash: "abc123", UpdatedAt: time.Date(2026, 11, 1, 0, 0, 0, 123456789, time.UTC),
		},
		{
			ID: "github__search", Server: "github", Name: "search", Description: "bad \xc3\x28 utf-8 \xff",
			ToolType: "read", PermissionScope: "read", Tags: []string{}, Status: catalog.StatusActive,
			UpdatedAt: time.Date(2020, 2, 29, 23, 59, 59, 0, time.FixedZone("", -5*3600-1800)),
		},
		{ID: "jira__x", Server: "jira", Name: "x", Status: catalog.StatusStale, InputSchema: json.RawMessage{}},
	}
	return tools, servers
}

// jsonRoundTrip is what the JSON copy gave a gateway for c.
func jsonRoundTrip(t *testing.T, c CatalogCopy) CatalogCopy {
	t.Helper()
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out CatalogCopy
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestCatalogCopyBinaryDecodesAsJSON: the binary copy decodes to the
// records the JSON copy gave (compared field by field through their JSON,
// and the zones and nil-ness of every value).
func TestCatalogCopyBinaryDecodesAsJSON(t *testing.T) {
	ctx := context.Background()
	tools, servers := copyFixture()
	b := NewDirBucket(t.TempDir())
	if err := WriteCatalog(ctx, b, "p/", "sha-ix", tools, servers, []byte("kw")); err != nil {
		t.Fatal(err)
	}
	raw, _, err := b.Get(ctx, "p/"+CatalogKey, "")
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	plain, _ := io.ReadAll(zr)
	if !bytes.HasPrefix(plain, []byte(copyMagic)) {
		t.Fatalf("the copy is not written in the binary encoding: %q", plain[:min(len(plain), 40)])
	}
	got, _, ok, err := ReadCatalog(ctx, b, "p/", "sha-ix", "")
	if err != nil || !ok {
		t.Fatalf("ReadCatalog: ok=%v err=%v", ok, err)
	}
	want := CatalogCopy{IndexSHA256: "sha-ix", KeywordsSHA256: got.KeywordsSHA256, Tools: tools, Servers: servers}
	want.Servers = append([]catalog.Server(nil), servers...)
	for i := range want.Servers {
		want.Servers[i].SyncedAt = time.Time{}
	}
	want = jsonRoundTrip(t, want)
	if got.KeywordsSHA256 == "" {
		t.Fatal("the keyword analysis is not named")
	}
	if g, w := mustJSON(t, got), mustJSON(t, want); g != w {
		t.Fatalf("binary copy decodes to\n%s\nJSON copy to\n%s", g, w)
	}
	for i, w := range want.Tools {
		g := got.Tools[i]
		if g.InputSchema == nil != (w.InputSchema == nil) || g.Annotations == nil != (w.Annotations == nil) || g.Tags == nil != (w.Tags == nil) {
			t.Errorf("tool %s: nil-ness differs: got schema %v annotations %v tags %v", w.ID, g.InputSchema == nil, g.Annotations == nil, g.Tags == nil)
		}
		if string(g.InputSchema) != string(w.InputSchema) {
			t.Errorf("tool %s: schema %s, JSON gives %s", w.ID, g.InputSchema, w.InputSchema)
		}
		gn, go_ := g.UpdatedAt.Zone()
		wn, wo := w.UpdatedAt.Zone()
		if !g.UpdatedAt.Equal(w.UpdatedAt) || gn != wn || go_ != wo || g.UpdatedAt.Location().String() != w.UpdatedAt.Location().String() {
			t.Errorf("tool %s: updated_at %v (%s), JSON gives %v (%s)", w.ID, g.UpdatedAt, g.UpdatedAt.Location(), w.UpdatedAt, w.UpdatedAt.Location())
		}
		if g.UpdatedAt.IsZero() && g.UpdatedAt != (time.Time{}) {
			t.Errorf("tool %s: zero time is not time.Time{}: %#v", w.ID, g.UpdatedAt)
		}
	}
}

// TestReadCatalogReadsJSONCopies: a copy written by an earlier version
// (gzip'd JSON) is still read.
func TestReadCatalogReadsJSONCopies(t *testing.T) {
	ctx := context.Background()
	tools, servers := copyFixture()
	c := CatalogCopy{IndexSHA256: "old", Tools: tools, Servers: servers}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if err := json.NewEncoder(zw).Encode(c); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	b := NewDirBucket(t.TempDir())
	if _, err := b.Put(ctx, CatalogKey, buf.Bytes(), Cond{}); err != nil {
		t.Fatal(err)
	}
	got, _, ok, err := ReadCatalog(ctx, b, "", "old", "")
	if err != nil || !ok {
		t.Fatalf("ReadCatalog: ok=%v err=%v", ok, err)
	}
	if g, w := mustJSON(t, got), mustJSON(t, jsonRoundTrip(t, c)); g != w {
		t.Fatalf("JSON copy decodes to\n%s\nwant\n%s", g, w)
	}
}

// TestCatalogCopyBytesStable: the same content gives the same bytes (a
// sync that changed nothing writes nothing), whatever the servers'
// SyncedAt.
func TestCatalogCopyBytesStable(t *testing.T) {
	ctx := context.Background()
	tools, servers := copyFixture()
	b := NewDirBucket(t.TempDir())
	if err := WriteCatalog(ctx, b, "", "x", tools, servers, nil); err != nil {
		t.Fatal(err)
	}
	first, _, _ := b.Get(ctx, CatalogKey, "")
	servers[0].SyncedAt = time.Now()
	if err := WriteCatalog(ctx, b, "", "x", tools, servers, nil); err != nil {
		t.Fatal(err)
	}
	second, _, _ := b.Get(ctx, CatalogKey, "")
	if !bytes.Equal(first, second) {
		t.Fatal("the same catalog encoded to different bytes")
	}
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestReadCatalogDamagedCopies: every kind of damage is an error (the
// gateway then reads the tools table), never a partial catalog.
func TestReadCatalogDamagedCopies(t *testing.T) {
	ctx := context.Background()
	tools, servers := copyFixture()
	plain, err := encodeCopyBinary(nil, CatalogCopy{IndexSHA256: "x", Tools: tools, Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	good := gz(plain)
	flipped := bytes.Clone(good)
	flipped[len(flipped)/2] ^= 0x40
	badCRC := bytes.Clone(good)
	badCRC[len(badCRC)-6] ^= 1 // the CRC-32 of the gzip trailer
	version3 := bytes.Replace(plain, []byte(copyMagic+"\x02"), []byte(copyMagic+"\x03"), 1)
	hugeCount := append([]byte(copyMagic+"\x02\x01x\x00"), binary.AppendUvarint(nil, 1<<25)...)
	for _, tc := range []struct {
		name string
		body []byte
		want string
	}{
		{"not gzip", []byte("{}"), "not gzip"},
		{"truncated", good[:len(good)-9], ""},
		{"flipped bit", flipped, ""},
		{"bad gzip checksum", badCRC, "checksum"},
		{"truncated payload", gz(plain[:len(plain)-3]), "unexpected EOF"},
		{"trailing bytes", gz(append(bytes.Clone(plain), 0)), "after the last tool"},
		{"other version", gz(version3), "version 3"},
		{"count past the data", gz(hugeCount), "unexpected EOF"},
		{"count past the limit", gz(append([]byte(copyMagic+"\x02\x01x\x00"), binary.AppendUvarint(nil, 1<<40)...)), "past the limit"},
		{"string past the limit", gz(append([]byte(copyMagic+"\x02"), binary.AppendUvarint(nil, 1<<40)...)), "past the limit"},
		{"bad time", gz(append([]byte(copyMagic+"\x02\x01x\x00\x01\x01a\x00\x00\x00\x00"), 7)), "bad time"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := NewDirBucket(t.TempDir())
			if _, err := b.Put(ctx, CatalogKey, tc.body, Cond{}); err != nil {
				t.Fatal(err)
			}
			c, _, ok, err := ReadCatalog(ctx, b, "", "x", "")
			if err == nil || ok || len(c.Tools) != 0 {
				t.Fatalf("damaged copy read: ok=%v err=%v tools=%d", ok, err, len(c.Tools))
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), CatalogKey) {
				t.Fatalf("error %q does not say %q and name the copy", err, tc.want)
			}
		})
	}
}

// TestDecodeCatalogHeaderFirst: the header callback gets the keyword
// analysis hash before the tools are decoded.
func TestDecodeCatalogHeaderFirst(t *testing.T) {
	tools, servers := copyFixture()
	plain, err := encodeCopyBinary(nil, CatalogCopy{IndexSHA256: "ix", KeywordsSHA256: "kw", Tools: tools, Servers: servers})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	// A payload cut after the tools' count: the header is still reported.
	cut := plain[:bytes.Index(plain, []byte("github__create_issue"))]
	_, err = decodeCatalog(gz(cut), func(ix, kw string) { got = append(got, ix, kw) })
	if err == nil || fmt.Sprint(got) != "[ix kw]" {
		t.Fatalf("header %v, err %v; want [ix kw] and an error", got, err)
	}
}

func FuzzDecodeCopyBinary(f *testing.F) {
	tools, servers := copyFixture()
	plain, err := encodeCopyBinary(nil, CatalogCopy{IndexSHA256: "x", KeywordsSHA256: "y", Tools: tools, Servers: servers})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(plain[len(copyMagic):])
	f.Add([]byte{1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		c, err := decodeCopyBinary(bufio.NewReader(bytes.NewReader(b)), nil)
		if err != nil {
			return
		}
		// What decodes encodes again, and that encoding (its values
		// normalised as JSON would) is stable.
		again, err := encodeCopyBinary(nil, c)
		if err != nil {
			return // e.g. a schema that is not JSON
		}
		c2, err := decodeCopyBinary(bufio.NewReader(bytes.NewReader(again[len(copyMagic):])), nil)
		if err != nil {
			t.Fatalf("re-encoded copy does not decode: %v", err)
		}
		third, err := encodeCopyBinary(nil, c2)
		if err != nil || !bytes.Equal(again, third) {
			t.Fatalf("encoding is not stable (%v):\n%q\n%q", err, again, third)
		}
	})
}

// TestReadAllSized: the size hint only sizes the buffer; the bytes are
// the reader's whatever the hint.
func TestReadAllSized(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789"), 10_000)
	for _, hint := range []int{0, 1, len(data) - 1, len(data), len(data) + 1, 3 * len(data)} {
		got, err := readAllSized(bufio.NewReaderSize(bytes.NewReader(data), 16), hint)
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("hint %d: %d bytes, err %v", hint, len(got), err)
		}
	}
	if n := gzipSize(gz(data)); n != len(data) {
		t.Fatalf("gzipSize = %d, want %d", n, len(data))
	}
	if n := gzipSize([]byte("short")); n != 0 {
		t.Fatalf("gzipSize of a short body = %d", n)
	}
}

// TestReadKeywordsDamaged: a keyword analysis that is damaged, or whose
// content does not match its name, is an error.
func TestReadKeywordsDamaged(t *testing.T) {
	ctx := context.Background()
	b := NewDirBucket(t.TempDir())
	kw := bytes.Repeat([]byte("terms "), 1000)
	tools, servers := copyFixture()
	if err := WriteCatalog(ctx, b, "", "ix", tools, servers, kw); err != nil {
		t.Fatal(err)
	}
	c, _, _, err := ReadCatalog(ctx, b, "", "ix", "")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadKeywords(ctx, b, "", c.KeywordsSHA256)
	if err != nil || !bytes.Equal(got, kw) {
		t.Fatalf("ReadKeywords: %d bytes, %v", len(got), err)
	}
	key := KeywordsKey(c.KeywordsSHA256)
	good, _, _ := b.Get(ctx, key, "")
	for name, body := range map[string][]byte{
		"size trailer":  append(bytes.Clone(good[:len(good)-4]), 1, 0, 0, 0),
		"truncated":     good[:len(good)-10],
		"other content": gz([]byte("other terms")),
	} {
		if _, err := b.Put(ctx, key, body, Cond{}); err != nil {
			t.Fatal(err)
		}
		if _, err := ReadKeywords(ctx, b, "", c.KeywordsSHA256); err == nil {
			t.Errorf("%s: damaged keyword analysis read", name)
		}
	}
}
