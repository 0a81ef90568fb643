package vindex

import (
	"math"
	"math/rand/v2"
	"testing"
)

func naiveDot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func randUnit(r *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(r.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return v
}

func TestDot(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	lengths := []int{0, 1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 255, 256, 257, 384, 768, 1023, 1024, 1536}
	for _, kern := range kernels {
		ok, restore := setKernel(kern)
		if !ok {
			continue
		}
		for _, n := range lengths {
			a, b := randUnit(r, n), randUnit(r, n)
			if n == 0 {
				a, b = nil, nil
			}
			want := naiveDot(a, b)
			if got := Dot(a, b); math.Abs(float64(got)-want) > 1e-5 {
				t.Errorf("%s: Dot(len %d) = %v, want %v", kern, n, got, want)
			}
			if got := dotGeneric(a, b); math.Abs(float64(got)-want) > 1e-5 {
				t.Errorf("dotGeneric(len %d) = %v, want %v", n, got, want)
			}
		}
		// Unequal lengths use the common prefix.
		a, b := randUnit(r, 20), randUnit(r, 13)
		if got, want := Dot(a, b), naiveDot(a[:13], b); math.Abs(float64(got)-want) > 1e-5 {
			t.Errorf("%s: Dot(20, 13) = %v, want %v", kern, got, want)
		}
		restore()
	}
}

func TestDotBatch(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, kern := range kernels {
		ok, restore := setKernel(kern)
		if !ok {
			continue
		}
		for _, dim := range []int{1, 3, 8, 12, 16, 24, 40, 67, 256} {
			for _, rows := range []int{0, 1, 3, 4, 5, 8, 11} {
				q := randUnit(r, dim)
				m := make([]float32, 0, rows*dim)
				for range rows {
					m = append(m, randUnit(r, dim)...)
				}
				out := make([]float32, rows)
				for i := range out {
					out[i] = 42 // must be overwritten
				}
				dotBatch(q, m, out)
				for i := range rows {
					want := naiveDot(q, m[i*dim:(i+1)*dim])
					if math.Abs(float64(out[i])-want) > 1e-5 {
						t.Errorf("%s: dim %d rows %d: row %d = %v, want %v", kern, dim, rows, i, out[i], want)
					}
				}
			}
		}
		restore()
	}
}
