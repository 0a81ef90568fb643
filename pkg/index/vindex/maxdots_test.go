package vindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestMaxDots: MaxDots agrees with MaxDot for every id, stored or not,
// on a float32 and on an 8-bit index (within the 8-bit rounding: MaxDots
// scores codes the way Search does).
func TestMaxDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	const dim = 40
	vec := func() []float32 {
		v := make([]float32, dim)
		var n float64
		for j := range v {
			v[j] = float32(rng.NormFloat64())
			n += float64(v[j] * v[j])
		}
		for j := range v {
			v[j] /= float32(math.Sqrt(n))
		}
		return v
	}
	flat := New(dim)
	for id := int64(1); id <= 50; id++ {
		if err := flat.Upsert(id, vec()); err != nil {
			t.Fatal(err)
		}
	}
	qs := [][]float32{vec(), vec(), make([]float32, dim-1)}
	ids := []int64{3, 99, 50, 1, 3}
	for name, ix := range map[string]*Index{"float32": flat, "8-bit": flat.Quantize(nil)} {
		best := make([]float32, len(ids))
		ok := make([]bool, len(ids))
		ix.MaxDots(ids, qs, best, ok)
		for i, id := range ids {
			want, wantOK := ix.MaxDot(id, qs...)
			if ok[i] != wantOK || math.Abs(float64(best[i]-want)) > 1e-4 {
				t.Errorf("%s: id %d: MaxDots %v %v, MaxDot %v %v", name, id, best[i], ok[i], want, wantOK)
			}
		}
		if ok[1] {
			t.Errorf("%s: an id that is not stored was scored", name)
		}
	}
}

// TestSearchMultiSplit: splitting the rows over goroutines returns exactly
// SearchMulti's hits (order, ties by id, k larger than a range, a filter,
// a query of the wrong length), on a float32 and an 8-bit index.
func TestSearchMultiSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const dim = 16
	flat := New(dim)
	for id := int64(1); id <= 5000; id++ {
		v := make([]float32, dim)
		for j := range v {
			// Few distinct values: many equal scores, ordered by id.
			v[j] = float32(rng.IntN(3)) / 4
		}
		if err := flat.Upsert(id, v); err != nil {
			t.Fatal(err)
		}
	}
	qs := [][]float32{make([]float32, dim), make([]float32, dim), make([]float32, 3)}
	for j := range dim {
		qs[0][j] = float32(rng.NormFloat64())
		qs[1][j] = float32(j % 2)
	}
	odd := func(id int64) bool { return id%2 == 1 }
	for name, ix := range map[string]*Index{"float32": flat, "8-bit": flat.Quantize(nil)} {
		for _, k := range []int{1, 10, 200, 6000} {
			for _, allow := range []func(int64) bool{nil, odd} {
				want := ix.SearchMulti(qs, k, allow)
				for _, parts := range []int{2, 3, 7} {
					got := ix.SearchMultiSplit(qs, k, allow, parts)
					for i := range qs {
						if !slices.Equal(got[i], want[i]) {
							t.Fatalf("%s k=%d parts=%d filter=%v query %d: %d hits differ from SearchMulti's %d", name, k, parts, allow != nil, i, len(got[i]), len(want[i]))
						}
					}
				}
			}
		}
	}
}

// TestDotCodes2: the two-query kernel gives each query exactly what
// dotCodes gives it, for every length (tails included), with and without
// the assembly kernel.
func TestDotCodes2(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for _, kernel := range kernels {
		ok, restore := setKernel(kernel)
		if !ok {
			continue
		}
		for n := 0; n <= 80; n++ {
			w1, w2, c := make([]float32, n), make([]float32, n), make([]uint8, n)
			for i := range n {
				w1[i], w2[i], c[i] = float32(rng.NormFloat64()), float32(rng.NormFloat64()), uint8(rng.IntN(256))
			}
			x, y := dotCodes2(w1, w2, c)
			if wx, wy := dotCodes(w1, c), dotCodes(w2, c); x != wx || y != wy {
				t.Fatalf("%s n=%d: dotCodes2 %v %v, dotCodes %v %v", kernel, n, x, y, wx, wy)
			}
		}
		restore()
	}
}
