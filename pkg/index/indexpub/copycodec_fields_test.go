package indexpub

import (
	"bufio"
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// fillEvery sets every field of the struct v points to a distinct
// non-zero value, or fails: a field of a kind it does not know is a field
// the binary copy may not carry either.
func fillEvery(t *testing.T, v any) {
	t.Helper()
	rv := reflect.ValueOf(v).Elem()
	for i := range rv.NumField() {
		f, name := rv.Field(i), rv.Type().Field(i).Name
		switch {
		case f.Type() == reflect.TypeFor[json.RawMessage]():
			f.Set(reflect.ValueOf(json.RawMessage(`{"field":"` + name + `"}`)))
		case f.Type() == reflect.TypeFor[time.Time]():
			f.Set(reflect.ValueOf(time.Date(2026, 12, 1, 10, i, 5, 123456789, time.FixedZone("", 3600))))
		case f.Kind() == reflect.String:
			f.SetString(name + " value")
		case f.Type() == reflect.TypeFor[[]string]():
			f.Set(reflect.ValueOf([]string{name, name + "2"}))
		default:
			t.Fatalf("%s.%s is a %s, which this test (and maybe the binary catalog copy) does not carry: teach both", rv.Type(), name, f.Type())
		}
	}
}

// Every field of catalog.Tool and catalog.Server survives the binary
// copy: a field added to them but not to the encoding fails here.
func TestCatalogCopyBinaryCarriesEveryField(t *testing.T) {
	var tool catalog.Tool
	var srv catalog.Server
	fillEvery(t, &tool)
	fillEvery(t, &srv)
	in := CatalogCopy{IndexSHA256: "ix", KeywordsSHA256: "kw", Tools: []catalog.Tool{tool}, Servers: []catalog.Server{srv}}
	enc, err := encodeCopyBinary(nil, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := decodeCopyBinary(bufio.NewReader(bytes.NewReader(enc[len(copyMagic):])), nil)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(in)
	got, _ := json.Marshal(out)
	if !bytes.Equal(got, want) {
		t.Errorf("binary copy round trip:\n got %s\nwant %s", got, want)
	}
}

// A copy in encoding version 1 (written by the previous release, without
// the extra fields) still decodes, to the same records less Extra.
func TestFidelityCatalogCopyReadsVersion1(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	e := copyEncoder{b: []byte(copyMagic)}
	e.uv(1)
	e.str("ix")
	e.str("kw")
	e.uv(1)
	for _, s := range []string{"srv", "Server", "desc", "active", ""} {
		e.str(s)
	}
	e.time(at)
	e.uv(1)
	for _, s := range []string{"srv__t", "srv", "t", "T", "does t"} {
		e.str(s)
	}
	_ = e.raw(json.RawMessage(`{"type":"object"}`))
	_ = e.raw(nil)
	e.str("read")
	e.str("read")
	e.uv(0)
	e.str("active")
	e.str("sha256:x")
	e.time(at)
	out, err := decodeCopyBinary(bufio.NewReader(bytes.NewReader(e.b[len(copyMagic):])), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Tools) != 1 || out.Tools[0].ID != "srv__t" || string(out.Tools[0].InputSchema) != `{"type":"object"}` || out.Tools[0].Extra != nil ||
		len(out.Servers) != 1 || out.Servers[0].Title != "Server" || out.Servers[0].Extra != nil {
		t.Errorf("version 1 copy decoded to %+v", out)
	}
}
