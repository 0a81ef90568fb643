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
