package vindex

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unsafe"
)

// goldenVectors are the vectors of testdata/*.faiss (see make_golden.py).
func goldenVectors() [][]float32 {
	var out [][]float32
	for r := range 3 {
		v := make([]float32, 8)
		for c := range v {
			v[c] = float32(r*8+c+1) / 10
		}
		out = append(out, unit(v...))
	}
	return out
}

func TestGoldenFaissFiles(t *testing.T) {
	faissIDs := []int64{100, 200, 0x0102030405060708}
	tests := []struct {
		file    string
		wantErr error
		wantIDs []int64
		// rewrite is how WriteTo's output relates to the file: "same" bytes,
		// "IxMp" (same after setting the fourcc to IxMp) or "" (not compared).
		rewrite string
	}{
		{"idmap_ip.faiss", nil, faissIDs, "same"},
		{"idmap2_ip.faiss", nil, faissIDs, "IxMp"},
		{"flat_ip.faiss", nil, []int64{0, 1, 2}, ""},
		{"empty_idmap_ip.faiss", nil, []int64{}, "same"},
		{"flat_l2.faiss", ErrUnsupported, nil, ""},
		{"idmap_l2.faiss", ErrUnsupported, nil, ""},
		{"hnsw.faiss", ErrUnsupported, nil, ""},
		{"ivf_ip.faiss", ErrUnsupported, nil, ""},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", tc.file))
			if err != nil {
				t.Fatal(err)
			}
			ix, err := Decode(b)
			ix2, err2 := Read(bytes.NewReader(b))
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) || !errors.Is(err2, tc.wantErr) {
					t.Fatalf("Decode error %v, Read error %v, want %v", err, err2, tc.wantErr)
				}
				return
			}
			if err != nil || err2 != nil {
				t.Fatalf("Decode: %v, Read: %v", err, err2)
			}
			if ix.Dim() != 8 || !slices.Equal(ix.IDs(), tc.wantIDs) || !slices.Equal(ix2.IDs(), tc.wantIDs) {
				t.Fatalf("dim %d ids %v / %v, want 8 and %v", ix.Dim(), ix.IDs(), ix2.IDs(), tc.wantIDs)
			}
			for i, id := range tc.wantIDs {
				v, _ := ix.Vector(id)
				for j, want := range goldenVectors()[i] {
					if math.Abs(float64(v[j]-want)) > 1e-6 {
						t.Fatalf("vector %d component %d = %v, want %v", id, j, v[j], want)
					}
				}
			}
			var out bytes.Buffer
			n, err := ix.WriteTo(&out)
			if err != nil || n != int64(out.Len()) {
				t.Fatalf("WriteTo = %d, %v; wrote %d bytes", n, err, out.Len())
			}
			want := slices.Clone(b)
			switch tc.rewrite {
			case "IxMp":
				copy(want, "IxMp")
				fallthrough
			case "same":
				if !bytes.Equal(out.Bytes(), want) {
					t.Fatalf("WriteTo differs from the faiss file:\n got %x\nwant %x", out.Bytes(), want)
				}
			}
		})
	}
}

func randomIndex(t testing.TB, seed uint64, n, dim int) *Index {
	r := rand.New(rand.NewPCG(seed, seed+1))
	ix := New(dim)
	for range n {
		if err := ix.Upsert(int64(r.Uint64()>>1), randUnit(r, dim)); err != nil {
			t.Fatal(err)
		}
	}
	return ix
}

func encode(t testing.TB, ix *Index) []byte {
	var b bytes.Buffer
	if _, err := ix.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func sameIndex(t *testing.T, got, want *Index) {
	t.Helper()
	if got.Dim() != want.Dim() || !slices.Equal(got.IDs(), want.IDs()) {
		t.Fatalf("dim %d ids %v, want %d %v", got.Dim(), got.IDs(), want.Dim(), want.IDs())
	}
	for _, id := range want.IDs() {
		a, _ := got.Vector(id)
		b, _ := want.Vector(id)
		if !slices.Equal(a, b) {
			t.Fatalf("vector %d differs", id)
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for _, tc := range []struct{ n, dim int }{{0, 1}, {1, 1}, {3, 8}, {100, 67}, {600, 256}} {
		ix := randomIndex(t, uint64(tc.n), tc.n, tc.dim)
		ids := ix.IDs()
		if len(ids) > 2 {
			ix.Delete(ids[0], ids[len(ids)/2])
		}
		b := encode(t, ix)
		if want := 2*37 + 8 + ix.Len()*tc.dim*4 + 8 + ix.Len()*8; len(b) != want {
			t.Fatalf("n=%d dim=%d: %d bytes, want %d", tc.n, tc.dim, len(b), want)
		}
		got, err := Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		sameIndex(t, got, ix)
		got, err = Read(iotest.OneByteReader(bytes.NewReader(b)))
		if err != nil {
			t.Fatal(err)
		}
		sameIndex(t, got, ix)
		// In place, from every alignment of the input.
		for shift := range 4 {
			in := make([]byte, len(b)+shift)[shift:]
			copy(in, b)
			got, err = DecodeInPlace(in)
			if err != nil {
				t.Fatalf("n=%d dim=%d, input at +%d: %v", tc.n, tc.dim, shift, err)
			}
			sameIndex(t, got, ix)
		}
	}
}

// TestDecodeInPlaceKeepsInput: the vectors stay in the input's memory
// (allocations are a small fraction of it), and the index stays usable:
// search, upsert and delete.
func TestDecodeInPlaceKeepsInput(t *testing.T) {
	ix := randomIndex(t, 5, 2000, 64)
	b := encode(t, ix)
	for shift := range 4 {
		in := make([]byte, len(b)+shift)[shift:]
		copy(in, b)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		got, err := DecodeInPlace(in)
		runtime.ReadMemStats(&after)
		if err != nil {
			t.Fatal(err)
		}
		if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(len(b)/4) {
			t.Errorf("input at +%d: DecodeInPlace allocated %d bytes for a %d-byte index", shift, alloc, len(b))
		}
		v, _ := got.Vector(got.IDs()[0])
		if p := uintptr(unsafe.Pointer(&got.vecs[0])); p < uintptr(unsafe.Pointer(&in[0])) || p >= uintptr(unsafe.Pointer(&in[0]))+uintptr(len(in)) {
			t.Errorf("input at +%d: the vectors are not in the input's memory", shift)
		}
		if hits := got.Search(v, 1, nil); len(hits) != 1 || hits[0].ID != got.IDs()[0] {
			t.Fatalf("search after DecodeInPlace: %+v", hits)
		}
		if err := got.Upsert(1<<40, v); err != nil || got.Len() != ix.Len()+1 {
			t.Fatalf("upsert after DecodeInPlace: %v, %d vectors", err, got.Len())
		}
		if got.Delete(got.IDs()[0]) != 1 {
			t.Fatal("delete after DecodeInPlace")
		}
	}
}

func TestDecodeDoesNotRetainInput(t *testing.T) {
	ix := randomIndex(t, 11, 10, 16)
	b := encode(t, ix)
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	clear(b)
	sameIndex(t, got, ix)
}

func TestReadConsumesExactlyOneIndex(t *testing.T) {
	a, b := randomIndex(t, 1, 5, 4), randomIndex(t, 2, 7, 3)
	r := bytes.NewReader(append(encode(t, a), encode(t, b)...))
	got, err := Read(r)
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, got, a)
	got, err = Read(r)
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, got, b)
	if _, err := Read(r); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read at EOF: %v, want ErrCorrupt", err)
	}
}

func TestEveryPrefixIsCorrupt(t *testing.T) {
	for _, ix := range []*Index{randomIndex(t, 3, 5, 4), New(3)} {
		b := encode(t, ix)
		for n := range len(b) {
			if _, err := Decode(b[:n]); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Decode of %d/%d bytes: %v, want ErrCorrupt", n, len(b), err)
			}
			if _, err := DecodeInPlace(slices.Clone(b[:n])); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("DecodeInPlace of %d/%d bytes: %v, want ErrCorrupt", n, len(b), err)
			}
			if _, err := Read(bytes.NewReader(b[:n])); !errors.Is(err, ErrCorrupt) {
				t.Fatalf("Read of %d/%d bytes: %v, want ErrCorrupt", n, len(b), err)
			}
		}
	}
}

func TestMalformed(t *testing.T) {
	valid := encode(t, randomIndex(t, 4, 3, 4)) // IxMp hdr 0..36, IxFI hdr 37..73, nfloats 74, data 82.., nids 130, ids 138..
	set := func(off int, v any) func([]byte) []byte {
		return func(b []byte) []byte {
			switch v := v.(type) {
			case string:
				copy(b[off:], v)
			case int32:
				binary.LittleEndian.PutUint32(b[off:], uint32(v))
			case int64:
				binary.LittleEndian.PutUint64(b[off:], uint64(v))
			}
			return b
		}
	}
	tests := []struct {
		name    string
		mutate  func([]byte) []byte
		wantErr error
		msg     string
	}{
		{"not faiss", set(0, "PK\x03\x04"), ErrCorrupt, "not a faiss index"},
		{"other faiss type", set(0, "IHNf"), ErrUnsupported, `"IHNf"`},
		{"L2 flat", set(0, "IxF2"), ErrUnsupported, "IndexFlatL2"},
		{"L2 metric in IDMap header", set(33, int32(1)), ErrUnsupported, "L2 metric"},
		{"other metric", set(33, int32(23)), ErrUnsupported, "metric type 23"},
		{"L2 metric in flat header", set(37+33, int32(1)), ErrUnsupported, "L2 metric"},
		{"IDMap wraps L2", set(37, "IxF2"), ErrUnsupported, "IndexFlatL2"},
		{"IDMap wraps junk", set(37, "\x00\x00\x00\x00"), ErrCorrupt, "not a faiss index"},
		{"zero dim", set(4, int32(0)), ErrCorrupt, "dimension 0"},
		{"negative dim", set(4, int32(-8)), ErrCorrupt, "dimension -8"},
		{"huge dim", set(4, int32(MaxDim+1)), ErrCorrupt, "dimension"},
		{"negative count", set(8, int64(-1)), ErrCorrupt, "-1 vectors"},
		{"dims disagree", set(37+4, int32(5)), ErrCorrupt, "IndexFlatIP says 5"},
		{"counts disagree", set(37+8, int64(2)), ErrCorrupt, "IndexFlatIP says 4 and 2"},
		{"float count wrong", set(74, int64(11)), ErrCorrupt, "11 floats"},
		{"id count wrong", set(130, int64(2)), ErrCorrupt, "3 vectors but 2 ids"},
		{"duplicate id", func(b []byte) []byte { copy(b[146:154], b[138:146]); return b }, ErrCorrupt, "stored twice"},
		{"trailing bytes", func(b []byte) []byte { return append(b, 0) }, ErrCorrupt, "1 unexpected bytes"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := tc.mutate(slices.Clone(valid))
			_, err := Decode(b)
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Decode error %v, want %v containing %q", err, tc.wantErr, tc.msg)
			}
			if tc.name == "trailing bytes" {
				return // Read stops at the end of the index
			}
			if _, err := Read(bytes.NewReader(b)); !errors.Is(err, tc.wantErr) {
				t.Fatalf("Read error %v, want %v", err, tc.wantErr)
			}
		})
	}
}

func TestLyingHeaderAllocatesLittle(t *testing.T) {
	// A header claiming 2^31-1 vectors of MaxDim floats (512 TiB) followed by
	// a few bytes.
	b := appendHeader(nil, fourccIDMap, MaxDim, math.MaxInt32)
	b = appendHeader(b, fourccFlatIP, MaxDim, math.MaxInt32)
	b = binary.LittleEndian.AppendUint64(b, uint64(math.MaxInt32)*MaxDim)
	b = append(b, make([]byte, 100)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(b))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("Read: %v, want ErrCorrupt", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 8<<20 {
		t.Fatalf("Read allocated %d bytes for a 200-byte input", alloc)
	}
	runtime.ReadMemStats(&before)
	_, err = Decode(b)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), "only 100 bytes follow") {
		t.Fatalf("Decode: %v, want ErrCorrupt saying only 100 bytes follow", err)
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 64<<10 {
		t.Fatalf("Decode allocated %d bytes for a 200-byte input", alloc)
	}
}

func TestReadIOError(t *testing.T) {
	boom := errors.New("disk on fire")
	b := encode(t, randomIndex(t, 5, 3, 4))
	for _, n := range []int{0, 20, 90, 140} {
		r := io.MultiReader(bytes.NewReader(b[:n]), iotest.ErrReader(boom))
		_, err := Read(r)
		if !errors.Is(err, boom) || errors.Is(err, ErrCorrupt) {
			t.Fatalf("after %d bytes: %v, want the reader's error and not ErrCorrupt", n, err)
		}
	}
}

type failWriter struct{ left int }

func (w *failWriter) Write(p []byte) (int, error) {
	if len(p) > w.left {
		n := w.left
		w.left = 0
		return n, errors.New("disk full")
	}
	w.left -= len(p)
	return len(p), nil
}

func TestWriteToInvalidDim(t *testing.T) {
	var b bytes.Buffer
	if n, err := New(0).WriteTo(&b); err == nil || n != 0 || b.Len() != 0 {
		t.Fatalf("WriteTo of a dimension-0 index = %d, %v", n, err)
	}
}

func TestWriteToError(t *testing.T) {
	ix := randomIndex(t, 6, 3, 4)
	size := len(encode(t, ix))
	for _, left := range []int{0, 50, 100, 135, size - 1} {
		n, err := ix.WriteTo(&failWriter{left: left})
		if err == nil || !strings.Contains(err.Error(), "disk full") || n != int64(left) {
			t.Fatalf("WriteTo with %d bytes of room = %d, %v", left, n, err)
		}
	}
}

// TestEncodedReader: the reader gives exactly WriteTo's bytes, read whole
// or at any offset, without copying the vectors.
func TestEncodedReader(t *testing.T) {
	for _, tc := range []struct{ n, dim int }{{0, 1}, {1, 3}, {100, 67}} {
		ix := randomIndex(t, uint64(tc.n)+7, tc.n, tc.dim)
		want := encode(t, ix)
		r, ok := ix.EncodedReader()
		if !ok {
			if littleEndian {
				t.Fatal("EncodedReader not available on a little-endian machine")
			}
			return // big-endian: WriteTo converts the bytes
		}
		if r.Size() != int64(len(want)) || ix.EncodedSize() != int64(len(want)) {
			t.Fatalf("n=%d: Size %d, EncodedSize %d, WriteTo wrote %d", tc.n, r.Size(), ix.EncodedSize(), len(want))
		}
		got, err := io.ReadAll(r)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("n=%d: ReadAll differs from WriteTo (%v)", tc.n, err)
		}
		rng := rand.New(rand.NewPCG(uint64(tc.n), 1))
		for range 50 {
			off := rng.IntN(len(want))
			p := make([]byte, rng.IntN(len(want)-off)+1)
			if m, err := r.ReadAt(p, int64(off)); m != len(p) || (err != nil && err != io.EOF) || !bytes.Equal(p, want[off:off+len(p)]) {
				t.Fatalf("n=%d: ReadAt(%d bytes at %d) = %d, %v", tc.n, len(p), off, m, err)
			}
		}
	}
}
