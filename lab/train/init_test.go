package train

import (
	"math"
	"math/rand/v2"
	"testing"
)

func BenchmarkLSAInit(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	V, N := 11000, 20000
	texts := make([]bag, N)
	for d := range texts {
		ids := make([]int, 12+rng.IntN(20))
		for i := range ids {
			ids[i] = int(float64(V) * rng.Float64() * rng.Float64())
		}
		texts[d] = makeBag(ids)
	}
	idf := make([]float64, V)
	for i := range idf {
		idf[i] = 1
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		lsa(texts, idf, V, 256, rng, 2)
	}
}

func TestOrthonormalize(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	rows, cols := 500, 12
	A := make([]float32, rows*cols)
	for i := range A {
		A[i] = float32(rng.NormFloat64())
	}
	// Make column 3 nearly parallel to column 0 (ill-conditioned).
	for r := 0; r < rows; r++ {
		A[r*cols+3] = A[r*cols] + 1e-3*A[r*cols+3]
	}
	orig := append([]float32(nil), A...)
	orthonormalize(A, rows, cols, 2, 2)
	for i := 0; i < cols; i++ {
		for j := 0; j < cols; j++ {
			var s float64
			for r := 0; r < rows; r++ {
				s += float64(A[r*cols+i]) * float64(A[r*cols+j])
			}
			want := 0.0
			if i == j {
				want = 1
			}
			if math.Abs(s-want) > 1e-4 {
				t.Fatalf("QᵀQ[%d][%d] = %v, want %v", i, j, s, want)
			}
		}
	}
	// Column 0 of the input lies in the span of Q.
	var resid, total float64
	proj := make([]float64, rows)
	for c := 0; c < cols; c++ {
		var d float64
		for r := 0; r < rows; r++ {
			d += float64(orig[r*cols]) * float64(A[r*cols+c])
		}
		for r := 0; r < rows; r++ {
			proj[r] += d * float64(A[r*cols+c])
		}
	}
	for r := 0; r < rows; r++ {
		e := float64(orig[r*cols]) - proj[r]
		resid += e * e
		total += float64(orig[r*cols]) * float64(orig[r*cols])
	}
	if resid > 1e-6*total {
		t.Fatalf("span not preserved: residual %v of %v", resid, total)
	}
}
