package vindex

import (
	"bytes"
	"errors"
	"math"
	"slices"
	"testing"
)

// FuzzRead feeds arbitrary bytes to Decode and Read. They must agree, fail
// only with ErrCorrupt or ErrUnsupported, never panic, and whatever they
// accept must survive a WriteTo/Decode round trip and a search. The seed
// corpus is in testdata/fuzz/FuzzRead (valid, truncated and foreign files).
func FuzzRead(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte("IxMp"))
	{ // an 8-bit index (IndexScalarQuantizer)
		flat := New(3)
		_ = flat.Upsert(7, []float32{0.6, 0.8, 0})
		_ = flat.Upsert(9, []float32{0, -0.6, 0.8})
		var b bytes.Buffer
		_, _ = flat.Quantize(nil).WriteTo(&b)
		f.Add(b.Bytes())
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		ix, err := Decode(b)
		ix2, err2 := Read(bytes.NewReader(b))
		ix3, err3 := DecodeInPlace(slices.Clone(b))
		if (err == nil) != (err3 == nil) {
			t.Fatalf("Decode: %v, DecodeInPlace: %v", err, err3)
		}
		if err3 == nil && !slices.Equal(ix.IDs(), ix3.IDs()) {
			t.Fatal("Decode and DecodeInPlace disagree on the ids")
		}
		if err3 == nil {
			for _, id := range ix.IDs() {
				v, _ := ix.Vector(id)
				v3, _ := ix3.Vector(id)
				if !slices.EqualFunc(v, v3, func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }) {
					t.Fatalf("Decode and DecodeInPlace disagree on vector %d", id)
				}
			}
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("Decode error %v wraps neither ErrCorrupt nor ErrUnsupported", err)
			}
			// Read stops at the end of the index, so it may accept input
			// that Decode rejects for trailing bytes.
			if err2 == nil && !bytes.Contains([]byte(err.Error()), []byte("unexpected bytes after")) {
				t.Fatalf("Decode failed (%v) but Read accepted the input", err)
			}
			if err2 != nil && !errors.Is(err2, ErrCorrupt) && !errors.Is(err2, ErrUnsupported) {
				t.Fatalf("Read error %v wraps neither ErrCorrupt nor ErrUnsupported", err2)
			}
			return
		}
		if err2 != nil {
			t.Fatalf("Decode accepted the input but Read failed: %v", err2)
		}
		if !slices.Equal(ix.IDs(), ix2.IDs()) {
			t.Fatal("Decode and Read disagree on the ids")
		}
		var out bytes.Buffer
		if _, err := ix.WriteTo(&out); err != nil {
			t.Fatal(err)
		}
		back, err := Decode(out.Bytes())
		if err != nil {
			t.Fatalf("re-decoding WriteTo output: %v", err)
		}
		if !slices.Equal(back.IDs(), ix.IDs()) {
			t.Fatal("round trip changed the ids")
		}
		q := make([]float32, ix.Dim())
		q[0] = 1
		if hits := ix.Search(q, 3, nil); len(hits) != min(3, ix.Len()) {
			t.Fatalf("Search returned %d hits from %d vectors", len(hits), ix.Len())
		}
	})
}
