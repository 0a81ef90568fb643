package vindex

import "math"

// Normalize scales v to unit length in place, so that Dot of two such
// vectors is their cosine; the zero vector stays zero.
func Normalize(v []float32) {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
}

// Dot returns the inner product of a and b over their common length. It is
// the kernel behind Search: on amd64 CPUs with AVX2 and FMA it runs in
// assembly, elsewhere (arm64 Lambda included) in unrolled pure Go. Results
// stay within 1e-5 of the naive sequential sum for unit-length vectors.
func Dot(a, b []float32) float32 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	if useAVX2 && n >= 8 {
		n8 := n &^ 7
		s := dotAVX2(&a[0], &b[0], n8)
		for i := n8; i < n; i++ {
			s += a[i] * b[i]
		}
		return s
	}
	return dotGeneric(a[:n], b[:n])
}

// dotGeneric is the portable kernel of Dot and dotCodes (b float32s or
// 8-bit codes): eight independent accumulators so the CPU can overlap the
// multiply-adds, and re-sliced blocks so the compiler drops the bounds
// checks in the loop body.
func dotGeneric[E float32 | uint8](a []float32, b []E) float32 {
	n := min(len(a), len(b))
	a, b = a[:n], b[:n]
	var s0, s1, s2, s3, s4, s5, s6, s7 float32
	i := 0
	for ; i+8 <= n; i += 8 {
		x := a[i : i+8 : i+8]
		y := b[i : i+8 : i+8]
		s0 += x[0] * float32(y[0])
		s1 += x[1] * float32(y[1])
		s2 += x[2] * float32(y[2])
		s3 += x[3] * float32(y[3])
		s4 += x[4] * float32(y[4])
		s5 += x[5] * float32(y[5])
		s6 += x[6] * float32(y[6])
		s7 += x[7] * float32(y[7])
	}
	for ; i < n; i++ {
		s0 += a[i] * float32(b[i])
	}
	return ((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))
}

// dotBatch sets out[r] to the inner product of q with row r of the
// row-major matrix m (len(out) rows of len(q) floats).
func dotBatch(q, m, out []float32) {
	dim, rows := len(q), len(out)
	if rows == 0 || dim == 0 {
		clear(out)
		return
	}
	m = m[:rows*dim]
	if useAVX2 && dim >= 8 {
		d8 := dim &^ 7
		groups := rows / 4
		if groups > 0 {
			dot4AVX2(&q[0], &m[0], d8, dim, groups, &out[0])
		}
		for r := groups * 4; r < rows; r++ {
			out[r] = dotAVX2(&q[0], &m[r*dim], d8)
		}
		if d8 < dim {
			for r := range out {
				row := m[r*dim : (r+1)*dim]
				s := out[r]
				for j := d8; j < dim; j++ {
					s += q[j] * row[j]
				}
				out[r] = s
			}
		}
		return
	}
	for r := range out {
		out[r] = dotGeneric(q, m[r*dim:(r+1)*dim])
	}
}
