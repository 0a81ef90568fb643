package vindex

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"testing"
	"time"
)

// TestDecodeMetaLikeEncodingJSON: DecodeMeta gives what json.Unmarshal
// gives, values and errors, on the written form and on others.
func TestDecodeMetaLikeEncodingJSON(t *testing.T) {
	written, err := json.Marshal(Meta{ModelID: "m", Dim: 4, Count: 2, BuiltAt: time.Date(2026, 1, 2, 3, 4, 5, 500, time.UTC),
		IDs: map[string]string{"1": "a__b", "22": "c__d é"}, Hashes: map[string]string{"a__b": "h1", "c__d é": "h<2>"}, IndexSHA256: "x"})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		in   string
		fast bool // taken by the fast parser
	}{
		{string(written), true},
		{" { \"ids\" : { \"1\" : \"a\\u0041\\n\\\"q\\\\\" ,\n\t\"2\":\"é ü \xff\" } , \"hashes\" : {} } ", true},
		{`{"ids":{"1":"a","1":"b"},"ids":{"2":"c"},"hashes":{"x":"\ud83d\ude00 \u00e9"}}`, true},
		{`{"dim":-3,"count":1e2}`, false}, // 1e2 is not an int: encoding/json's error
		{`{"model_id":"m\u0000","built_at":"2026-01-02T03:04:05+02:00"}`, true},
		{`{"count":1000000000000,"ids":{"1":"a"}}`, true},
		{`{}`, true},
		{`{"ids":{}}`, true},
		{`{"ids":null,"hashes":null,"dim":3}`, false},
		{`{"IDS":{"1":"upper"},"Hashes":{"k":"v"}}`, false},
		{`{"ids":{"1":"a"},"unknown":{"x":[1,2,{"y":"z"}]},"hashes":{"k":"v\u2028"}}`, false},
		{`{"ids":{"1":2}}`, false},
		{`{"ids":["a"]}`, false},
		{`{"hashes":{"k":null}}`, false},
		{`{"ids":{"1":"a"`, false},
		{`{"ids":{"1":"a"}} x`, false},
		{`{"ids":{"1":"a\`, false},
		{"{\"ids\":{\"1\":\"a\x01\"}}", false},
		{`{"dim":"4"}`, false},
		{`{"built_at":"yesterday"}`, false},
		{`[1]`, false},
		{``, false},
	} {
		var want Meta
		werr := json.Unmarshal([]byte(tc.in), &want)
		got, gerr := DecodeMeta([]byte(tc.in))
		if fmt.Sprint(werr) != fmt.Sprint(gerr) {
			t.Errorf("%s: error %v, encoding/json %v", tc.in, gerr, werr)
			continue
		}
		if werr == nil && !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tc.in, got, want)
		}
		if _, ok := parseMeta([]byte(tc.in)); ok != tc.fast {
			t.Errorf("%s: fast parser took it: %v, want %v", tc.in, ok, tc.fast)
		}
	}
}

func FuzzDecodeMeta(f *testing.F) {
	f.Add([]byte(`{"model_id":"m","dim":4,"count":2,"ids":{"1":"a"},"hashes":{"a":"h"},"index_sha256":"x"}`))
	f.Add([]byte(`{"ids":{"1":"a\u00e9\n"}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var want Meta
		werr := json.Unmarshal(b, &want)
		got, gerr := DecodeMeta(b)
		if (werr == nil) != (gerr == nil) || werr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: DecodeMeta %#v, %v; encoding/json %#v, %v", b, got, gerr, want, werr)
		}
	})
}

func benchMetaJSON(n int) []byte {
	m := Meta{ModelID: "builtin", Dim: 1536, Count: n, BuiltAt: time.Now(), IDs: map[string]string{}, Hashes: map[string]string{}}
	for i := range n {
		id := fmt.Sprintf("server%04d__create_invoice_%d", i/100, i)
		m.IDs[strconv.FormatInt(ToolKey(id), 10)] = id
		m.Hashes[id] = fmt.Sprintf("%064x", i)
	}
	b, _ := json.Marshal(m)
	return b
}

// BenchmarkDecodeMeta decodes the meta of a 100k-tool index with
// DecodeMeta and with json.Unmarshal.
//
//	go test -run '^$' -bench DecodeMeta -benchmem ./pkg/index/vindex/
func BenchmarkDecodeMeta(b *testing.B) {
	raw := benchMetaJSON(100_000)
	b.Run("DecodeMeta", func(b *testing.B) {
		for b.Loop() {
			if m, err := DecodeMeta(raw); err != nil || len(m.IDs) != 100_000 {
				b.Fatal(err)
			}
		}
	})
	b.Run("json.Unmarshal", func(b *testing.B) {
		for b.Loop() {
			var m Meta
			if err := json.Unmarshal(raw, &m); err != nil || len(m.IDs) != 100_000 {
				b.Fatal(err)
			}
		}
	})
}
