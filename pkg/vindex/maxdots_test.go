package vindex

import (
	"math"
	"math/rand/v2"
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
