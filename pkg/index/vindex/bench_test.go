package vindex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"
)

// benchIndex fills an index with n random unit vectors (ids 0..n-1) without
// going through Upsert, which is too slow for 100k×1024 in a benchmark setup.
func benchIndex(n, dim int, seed uint64) *Index {
	r := rand.New(rand.NewPCG(seed, 99))
	ix := &Index{dim: dim, ids: make([]int64, n), vecs: make([]float32, n*dim), pos: make(map[int64]int32, n)}
	for i := range n {
		row := ix.vecs[i*dim : (i+1)*dim]
		var s float64
		for j := range row {
			v := r.Float32()*2 - 1
			row[j] = v
			s += float64(v) * float64(v)
		}
		inv := float32(1 / math.Sqrt(s))
		for j := range row {
			row[j] *= inv
		}
		ix.ids[i] = int64(i)
		ix.pos[int64(i)] = int32(i)
	}
	return ix
}

var benchSizes = []struct{ n, dim int }{
	{1_000, 256}, {10_000, 256}, {100_000, 256},
	{1_000, 1024}, {10_000, 1024}, {100_000, 1024},
}

// BenchmarkSearch: one query, k=10, exhaustive.
func BenchmarkSearch(b *testing.B) {
	for _, sz := range benchSizes {
		ix := benchIndex(sz.n, sz.dim, 1)
		q := benchIndex(1, sz.dim, 2).vecs
		b.Run(fmt.Sprintf("n=%d/dim=%d", sz.n, sz.dim), func(b *testing.B) {
			b.SetBytes(int64(sz.n * sz.dim * 4))
			for b.Loop() {
				if len(ix.Search(q, 10, nil)) != 10 {
					b.Fatal("short result")
				}
			}
		})
	}
}

// BenchmarkSearchMulti: the five steps of a multi-step request against 10k
// and 100k vectors of the builtin embedder's 1,536 dimensions, k=200 (the
// retriever's candidate count), in one pass (multi) or one Search each
// (loop).
func BenchmarkSearchMulti(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		ix := benchIndex(n, 1536, 1)
		qv := benchIndex(5, 1536, 2).vecs
		qs := make([][]float32, 5)
		for i := range qs {
			qs[i] = qv[i*1536 : (i+1)*1536]
		}
		b.Run(fmt.Sprintf("n=%d/multi", n), func(b *testing.B) {
			for b.Loop() {
				ix.SearchMulti(qs, 200, nil)
			}
		})
		b.Run(fmt.Sprintf("n=%d/loop", n), func(b *testing.B) {
			for b.Loop() {
				for _, q := range qs {
					ix.Search(q, 200, nil)
				}
			}
		})
	}
}

// BenchmarkSearchFiltered: one query, k=10, an allow filter admitting half.
func BenchmarkSearchFiltered(b *testing.B) {
	ix := benchIndex(10_000, 256, 1)
	q := benchIndex(1, 256, 2).vecs
	allow := func(id int64) bool { return id%2 == 0 }
	for b.Loop() {
		ix.Search(q, 10, allow)
	}
}

func BenchmarkDot(b *testing.B) {
	for _, kern := range kernels {
		for _, dim := range []int{256, 1024} {
			v := benchIndex(2, dim, 3).vecs
			x, y := v[:dim], v[dim:]
			b.Run(fmt.Sprintf("%s/dim=%d", kern, dim), func(b *testing.B) {
				ok, restore := setKernel(kern)
				defer restore()
				if !ok {
					b.Skip("kernel not available")
				}
				b.SetBytes(int64(dim * 8))
				var s float32
				for b.Loop() {
					s += Dot(x, y)
				}
				_ = s
			})
		}
	}
}

// BenchmarkDecode: cold start from an in-memory blob (10k × 256).
func BenchmarkDecode(b *testing.B) {
	var buf bytes.Buffer
	benchIndex(10_000, 256, 4).WriteTo(&buf)
	blob := buf.Bytes()
	b.SetBytes(int64(len(blob)))
	for b.Loop() {
		if _, err := Decode(blob); err != nil {
			b.Fatal(err)
		}
	}
}

// TestMemoryPerVector checks that an index costs little more than its raw
// float32 data: ids, the id → row map and slice slack.
func TestMemoryPerVector(t *testing.T) {
	const n, dim = 20_000, 256
	r := rand.New(rand.NewPCG(1, 1))
	vecs := make([][]float32, n)
	for i := range vecs {
		vecs[i] = randUnit(r, dim)
	}
	var before, after runtime.MemStats
	ix := New(dim)
	for i, v := range vecs {
		ix.Upsert(int64(i)*7919, v)
	}
	var buf bytes.Buffer
	ix.WriteTo(&buf)
	ix, vecs = nil, nil
	runtime.GC()
	runtime.ReadMemStats(&before)
	ix, err := Decode(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(buf.Bytes())
	per := float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / n
	t.Logf("decoded index: %.1f bytes per %d-dim vector (raw floats %d)", per, dim, dim*4)
	if per > float64(dim*4+64) {
		t.Errorf("decoded index uses %.1f bytes per vector, want at most %d", per, dim*4+64)
	}
	runtime.KeepAlive(ix)
}

const faissTimingScript = `
import json, sys, time, faiss, numpy as np
faiss.omp_set_num_threads(1)
d, k, reps = int(sys.argv[1]), 10, int(sys.argv[2])
x = np.fromfile('x.f32', dtype='<f4').reshape(-1, d)
q = np.fromfile('q.f32', dtype='<f4').reshape(-1, d)
def timed(ix):
    t = []
    for _ in range(reps):
        for row in q:
            r = row.reshape(1, -1)
            s = time.perf_counter_ns(); ix.search(r, k); t.append(time.perf_counter_ns() - s)
    return float(np.median(t)) / 1e3
ix = faiss.IndexFlatIP(d); ix.add(x)
tiny = faiss.IndexFlatIP(d); tiny.add(x[:1])
D, I = ix.search(q[:1], k)
print(json.dumps({"us": timed(ix), "overhead_us": timed(tiny), "ids": I[0].tolist()}))
`

// TestFaissSpeedComparison times single-query k=10 searches here and in
// faiss IndexFlatIP (one thread) on the same vectors and queries and prints
// both medians and their ratio. It runs only with TOOLRAG_BENCH=1:
//
//	TOOLRAG_BENCH=1 go test ./pkg/index/vindex -run TestFaissSpeedComparison -v
func TestFaissSpeedComparison(t *testing.T) {
	if os.Getenv("TOOLRAG_BENCH") != "1" {
		t.Skip("set TOOLRAG_BENCH=1 to compare search latency with faiss")
	}
	py := faissPython(t)
	t.Logf("%-8s %-5s %10s %10s %12s %8s %10s", "n", "dim", "go µs", "faiss µs", "faiss-ovh", "ratio", "generic")
	for _, sz := range benchSizes {
		queries, reps := 50, 5
		if sz.n*sz.dim >= 10_000_000 {
			queries, reps = 20, 2 // keep the slow python side under a minute
		}
		dir := t.TempDir()
		ix := benchIndex(sz.n, sz.dim, 1)
		qs := benchIndex(queries, sz.dim, 2).vecs
		os.WriteFile(filepath.Join(dir, "x.f32"), f32bytes(ix.vecs), 0o644)
		os.WriteFile(filepath.Join(dir, "q.f32"), f32bytes(qs), 0o644)
		out := runPython(t, py, dir, faissTimingScript, fmt.Sprint(sz.dim), fmt.Sprint(reps))
		var fr struct {
			US         float64 `json:"us"`
			OverheadUS float64 `json:"overhead_us"`
			IDs        []int64 `json:"ids"`
		}
		if err := json.Unmarshal(out, &fr); err != nil {
			t.Fatalf("python output %q: %v", out, err)
		}
		if got := hitIDs(ix.Search(qs[:sz.dim], 10, nil)); !slices.Equal(got, fr.IDs) {
			t.Errorf("n=%d dim=%d: ids %v, faiss %v", sz.n, sz.dim, got, fr.IDs)
		}
		median := func() float64 {
			var times []time.Duration
			for range reps {
				for i := range queries {
					q := qs[i*sz.dim : (i+1)*sz.dim]
					start := time.Now()
					ix.Search(q, 10, nil)
					times = append(times, time.Since(start))
				}
			}
			slices.Sort(times)
			return float64(times[len(times)/2].Nanoseconds()) / 1e3
		}
		goUS := median()
		_, restore := setKernel("generic")
		genericUS := median()
		restore()
		net := max(fr.US-fr.OverheadUS, 1e-3)
		t.Logf("%-8d %-5d %10.1f %10.1f %12.1f %8.2f %10.1f", sz.n, sz.dim, goUS, fr.US, net, goUS/net, genericUS)
	}
	t.Logf("faiss-ovh = faiss minus its Python call overhead (a search of a 1-vector index); ratio = go / faiss-ovh; generic = this package's pure-Go kernel (arm64 path)")
}

// BenchmarkSearchQuantized: one query over the float32 and the 8-bit copy
// of the same 1,536-dim index (the builtin embedder's size), with the
// assembly and the portable kernels.
func BenchmarkSearchQuantized(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		flat := benchIndex(n, 1536, 1)
		sq := flat.Quantize(nil)
		q := benchIndex(1, 1536, 2).vecs
		for _, kern := range kernels {
			for _, c := range []struct {
				name string
				ix   *Index
			}{{"float32", flat}, {"sq8", sq}} {
				b.Run(fmt.Sprintf("n=%d/%s/%s", n, c.name, kern), func(b *testing.B) {
					ok, restore := setKernel(kern)
					defer restore()
					if !ok {
						b.Skip("kernel not available")
					}
					for b.Loop() {
						if len(c.ix.Search(q, 10, nil)) != 10 {
							b.Fatal("short result")
						}
					}
				})
			}
		}
	}
}
