package vindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func quantizedIndex(t testing.TB, r *rand.Rand, n, dim int) (*Index, *Index) {
	t.Helper()
	flat := New(dim)
	for i := range n {
		if err := flat.Upsert(ToolKey(fmt.Sprintf("srv__tool_%d", i)), randUnit(r, dim)); err != nil {
			t.Fatal(err)
		}
	}
	return flat, flat.Quantize(nil)
}

// The codes kernel (assembly and portable) equals the naive sum.
func TestDotCodes(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, kern := range kernels {
		ok, restore := setKernel(kern)
		if !ok {
			continue
		}
		for _, n := range []int{0, 1, 7, 8, 9, 31, 32, 33, 100, 1536} {
			w := randUnit(r, max(n, 1))[:n]
			c := make([]uint8, n)
			var want float64
			for i := range c {
				c[i] = uint8(r.UintN(256))
				want += float64(w[i]) * float64(c[i])
			}
			if got := dotCodes(w, c); math.Abs(float64(got)-want) > 1e-3*math.Max(1, math.Abs(want)) {
				t.Errorf("%s n=%d: dotCodes %v, want %v", kern, n, got, want)
			}
		}
		restore()
	}
}

// A quantised index scores within the quantisation error of the float
// index, its scores equal the inner product with the decoded vectors
// (what faiss computes), and the rankings agree but for near ties.
func TestQuantizedSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	const dim = 200
	flat, q := quantizedIndex(t, r, 1500, dim)
	if !q.Quantized() || flat.Quantized() || q.Len() != flat.Len() || q.Dim() != dim {
		t.Fatalf("Quantize: quantized %v, %d vectors of dim %d", q.Quantized(), q.Len(), q.Dim())
	}
	for _, kern := range kernels {
		ok, restore := setKernel(kern)
		if !ok {
			continue
		}
		for range 20 {
			qv := randUnit(r, dim)
			got := q.Search(qv, 10, nil)
			want := flat.Search(qv, 10, nil)
			for i, h := range got {
				dec, _ := q.Vector(h.ID)
				if exact := Dot(qv, dec); math.Abs(float64(exact-h.Score)) > 1e-5 {
					t.Fatalf("%s: score %v, inner product with the decoded vector %v", kern, h.Score, exact)
				}
				orig, _ := flat.Vector(h.ID)
				if d := math.Abs(float64(Dot(qv, orig) - h.Score)); d > 0.01 {
					t.Fatalf("%s: hit %d score %v is %v from the float score", kern, i, h.Score, d)
				}
				if best, ok := q.MaxDot(h.ID, qv); !ok || math.Abs(float64(best-h.Score)) > 1e-5 {
					t.Fatalf("%s: MaxDot %v, Search %v", kern, best, h.Score)
				}
			}
			if got[0].ID != want[0].ID && math.Abs(float64(want[0].Score-want[1].Score)) > 0.01 {
				t.Fatalf("%s: best hit %v, float index %v", kern, got[0], want[0])
			}
		}
		restore()
	}
	// Filtered and multi-query searches take the same path.
	qv := randUnit(r, dim)
	allow := func(id int64) bool { return id%3 == 0 }
	multi := q.SearchMulti([][]float32{qv, qv}, 5, allow)
	single := q.Search(qv, 5, allow)
	for i := range single {
		if multi[0][i] != single[i] || multi[1][i] != single[i] || single[i].ID%3 != 0 {
			t.Fatalf("SearchMulti %v / Search %v", multi, single)
		}
	}
}

// Re-quantising the decoded vectors of a quantised index with it as the
// reference gives back the same bytes (an incremental rebuild of an
// unchanged catalog), and a new vector outside a range widens only that
// dimension's range.
func TestRequantizeIsStable(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	const dim = 64
	_, q := quantizedIndex(t, r, 300, dim)
	encode := func(ix *Index) []byte {
		var b bytes.Buffer
		if _, err := ix.WriteTo(&b); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	want := encode(q)
	rebuild := New(dim)
	for _, id := range q.IDs() {
		v, _ := q.Vector(id)
		if err := rebuild.Upsert(id, v); err != nil {
			t.Fatal(err)
		}
	}
	if got := encode(rebuild.Quantize(q)); !bytes.Equal(got, want) {
		t.Fatal("re-quantising the decoded vectors with the same ranges changed the bytes")
	}
	if bytes.Equal(encode(rebuild.Quantize(nil)), want) {
		t.Fatal("without the reference the ranges shrink to the decoded values; the test cannot tell")
	}
	out := make([]float32, dim)
	out[5] = 2 // outside every range in dimension 5 only
	if err := rebuild.Upsert(ToolKey("new"), out); err != nil {
		t.Fatal(err)
	}
	q2 := rebuild.Quantize(q)
	for j := range dim {
		same := q2.sq.vmin[j] == q.sq.vmin[j] && q2.sq.vdiff[j] == q.sq.vdiff[j]
		if same != (j != 5) {
			t.Fatalf("dimension %d: range kept %v", j, same)
		}
	}
	if v, _ := q2.Vector(ToolKey("new")); math.Abs(float64(v[5]-2)) > float64(q2.sq.vdiff[5])/255 {
		t.Fatalf("the new vector decodes to %v in the widened dimension", v[5])
	}
}

// A quantised index round-trips through WriteTo / Decode / DecodeInPlace /
// Read and EncodedReader, and is four times smaller than the float one.
func TestQuantizedRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	const dim = 48
	flat, q := quantizedIndex(t, r, 250, dim)
	q.Delete(q.IDs()[7])
	var buf bytes.Buffer
	n, err := q.WriteTo(&buf)
	if err != nil || n != q.EncodedSize() || int64(buf.Len()) != n {
		t.Fatalf("WriteTo %d bytes (%v), EncodedSize %d", n, err, q.EncodedSize())
	}
	if ratio := float64(flat.EncodedSize()) / float64(q.EncodedSize()); ratio < 3 {
		t.Fatalf("quantised index is only %.2f× smaller", ratio)
	}
	er, ok := q.EncodedReader()
	if !ok {
		t.Fatal("no EncodedReader")
	}
	viaReader := make([]byte, er.Size())
	if _, err := er.ReadAt(viaReader, 0); err != nil || !bytes.Equal(viaReader, buf.Bytes()) {
		t.Fatalf("EncodedReader differs from WriteTo (%v)", err)
	}
	decoders := map[string]func([]byte) (*Index, error){
		"Decode":        Decode,
		"DecodeInPlace": func(b []byte) (*Index, error) { return DecodeInPlace(bytes.Clone(b)) },
		"Read":          func(b []byte) (*Index, error) { return Read(bytes.NewReader(b)) },
	}
	qv := randUnit(r, dim)
	for name, dec := range decoders {
		got, err := dec(buf.Bytes())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !got.Quantized() || got.Len() != q.Len() {
			t.Fatalf("%s: quantized %v, %d vectors", name, got.Quantized(), got.Len())
		}
		sameRanking(t, got.Search(qv, 10, nil), q.Search(qv, 10, nil), 0)
		var again bytes.Buffer
		got.WriteTo(&again)
		if !bytes.Equal(again.Bytes(), buf.Bytes()) {
			t.Fatalf("%s: re-encoding differs", name)
		}
	}
	// Truncations are reported as corrupt, never panic.
	for _, cut := range []int{10, 80, 120, 400, buf.Len() - 1} {
		if _, err := Decode(buf.Bytes()[:cut]); err == nil {
			t.Fatalf("Decode of %d of %d bytes succeeded", cut, buf.Len())
		}
	}
}

const faissSQScript = `
import json, sys, faiss, numpy as np
mode = sys.argv[1]
if mode == 'read':
    index_path, query_path, k, rewrite_path = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
    ix = faiss.read_index(index_path)
    inner = faiss.downcast_index(ix.index)
    q = np.fromfile(query_path, dtype='<f4').reshape(-1, ix.d)
    ids, scores = [], []
    for row in q:
        D, I = ix.search(row.reshape(1, -1), k)
        ids.append(I[0].tolist()); scores.append(D[0].tolist())
    faiss.write_index(ix, rewrite_path)
    print(json.dumps({"type": type(ix).__name__ + "/" + type(inner).__name__ + "/" + str(inner.sq.qtype), "ntotal": ix.ntotal, "ids": ids, "scores": scores}))
else:
    rng = np.random.default_rng(5)
    d, n, k = 40, 500, 10
    x = rng.standard_normal((n, d)).astype('float32'); x /= np.linalg.norm(x, axis=1, keepdims=True)
    ids = rng.integers(0, 2**62, size=n, dtype=np.int64)
    sq = faiss.IndexScalarQuantizer(d, faiss.ScalarQuantizer.QT_8bit, faiss.METRIC_INNER_PRODUCT)
    sq.train(x)
    m = faiss.IndexIDMap(sq); m.add_with_ids(x, ids)
    faiss.write_index(m, 'faiss_sq.faiss')
    q = rng.standard_normal((15, d)).astype('float32'); q /= np.linalg.norm(q, axis=1, keepdims=True)
    q.tofile('q.f32')
    I, D = [], []
    for row in q:
        Dq, Iq = m.search(row.reshape(1, -1), k)
        I.append(Iq[0].tolist()); D.append(Dq[0].tolist())
    print(json.dumps({"type": "IndexIDMap", "ntotal": m.ntotal, "ids": I, "scores": D}))
`

// TestFaissReadsQuantizedIndex: Debian's python3-faiss reads a quantised
// index written here as IndexIDMap(IndexScalarQuantizer QT_8bit), finds
// the same ids with the same scores (1e-5), and writes it back byte for
// byte; and an index faiss quantised and wrote loads here and gives
// faiss's results.
func TestFaissReadsQuantizedIndex(t *testing.T) {
	py := faissPython(t)
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(41, 42))
	const dim, k = 72, 10
	_, q := quantizedIndex(t, r, 900, dim)
	q.Delete(q.IDs()[4])
	var queries [][]float32
	for range 20 {
		queries = append(queries, randUnit(r, dim))
	}
	var buf bytes.Buffer
	if _, err := q.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	idxPath := filepath.Join(dir, "go_sq.faiss")
	if err := os.WriteFile(idxPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	writeFloats(t, filepath.Join(dir, "q.f32"), queries)
	out := runPython(t, py, dir, faissSQScript, "read", idxPath, filepath.Join(dir, "q.f32"), fmt.Sprint(k), filepath.Join(dir, "rewritten.faiss"))
	var res faissResult
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decoding python output %q: %v", out, err)
	}
	if res.Type != "IndexIDMap/IndexScalarQuantizer/0" || res.NTotal != q.Len() {
		t.Fatalf("faiss loaded %s with %d vectors, want IndexIDMap/IndexScalarQuantizer/0 (QT_8bit) with %d", res.Type, res.NTotal, q.Len())
	}
	for i, qv := range queries {
		sameRanking(t, q.Search(qv, k, nil), res.hits(i), 1e-5)
	}
	rewritten, err := os.ReadFile(filepath.Join(dir, "rewritten.faiss"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rewritten, buf.Bytes()) {
		t.Fatalf("faiss re-serialised the quantised index differently (%d vs %d bytes)", len(rewritten), buf.Len())
	}

	// The other way: faiss trains, quantises and writes; Go reads.
	out = runPython(t, py, dir, faissSQScript, "write")
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("decoding python output %q: %v", out, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "faiss_sq.faiss"))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := Decode(b)
	if err != nil || !ix.Quantized() || ix.Len() != res.NTotal {
		t.Fatalf("Decode of faiss's quantised index: %v", err)
	}
	qb, _ := os.ReadFile(filepath.Join(dir, "q.f32"))
	qs, _ := readArray[float32](&bytesSource{b: qb}, len(qb)/4, 4, "queries")
	for i := range res.IDs {
		sameRanking(t, ix.Search(qs[i*40:(i+1)*40], 10, nil), res.hits(i), 1e-5)
	}
}
