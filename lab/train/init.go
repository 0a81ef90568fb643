package train

import (
	"math"
	"math/rand/v2"
	"sort"
)

// init fills the table: every token row is idf(token) × (a·svd + b·random),
// where svd is the token's unit vector from a truncated SVD of the
// token-by-text matrix of the training text (log tf × idf, LSA), random is a
// unit Gaussian vector in the remaining dimensions, a² + b² = 1. Tokens in
// no training text get a zero row.
func (tr *trainer) init() {
	opts := tr.opts
	V := len(tr.tokVocab())
	D := opts.Dim
	tr.tab = newTable(V, D)
	rng := rand.New(rand.NewPCG(opts.Seed, 0x1417))

	// Training texts: documents of training tools and unique training
	// queries.
	var texts []bag
	for i, t := range tr.corpus.Tools {
		if !tr.heldOut[t.ID] && t.Text == "" && len(tr.docBags[i].ids) > 0 {
			texts = append(texts, tr.docBags[i])
		}
	}
	seenQ := map[string]bool{}
	for i, p := range tr.pairs {
		if p.Dataset == "wordnet" {
			continue
		}
		if !seenQ[p.Query] && len(tr.qBags[i].ids) > 0 {
			seenQ[p.Query] = true
			texts = append(texts, tr.qBags[i])
		}
	}
	df := make([]float64, V)
	for _, b := range texts {
		for _, id := range b.ids {
			df[id]++
		}
	}
	N := float64(len(texts))
	idf := make([]float64, V)
	for id := range idf {
		if df[id] > 0 {
			idf[id] = math.Log(1 + (N-df[id]+0.5)/(df[id]+0.5))
		}
	}
	tr.idf = idf

	k := opts.SVDDim
	var svd [][]float32
	if k > 0 {
		svd = lsa(texts, idf, V, k, rng, opts.Threads)
	}
	a := math.Sqrt(float64(k) / float64(D))
	if k > 0 && k < D {
		a = 0.7
	}
	b := math.Sqrt(1 - a*a)
	for id := 0; id < V; id++ {
		if df[id] == 0 {
			// Keep the random stream independent of which rows are empty.
			for j := k; j < D; j++ {
				rng.NormFloat64()
			}
			continue
		}
		row := tr.tab.row(int32(id))
		if k > 0 {
			s := svd[id]
			n := norm(s)
			if n > 0 {
				for j := 0; j < k; j++ {
					row[j] = float32(a) * s[j] / n
				}
			}
		}
		if k < D {
			r := make([]float32, D-k)
			for j := range r {
				r[j] = float32(rng.NormFloat64())
			}
			n := norm(r)
			for j := range r {
				row[k+j] = float32(b) * r[j] / n
			}
		}
		for j := range row {
			row[j] *= float32(idf[id])
		}
	}
}

func (tr *trainer) tokVocab() []string {
	out := make([]string, tr.tok.VocabSize())
	for i := range out {
		out[i] = tr.tok.Token(i)
	}
	return out
}

// lsa returns k-dimensional token vectors (U·Σ^½) of the V×N matrix
// X[token, text] = log(1+tf)·idf by randomized SVD with two power
// iterations.
func lsa(texts []bag, idf []float64, V, k int, rng *rand.Rand, threads int) [][]float32 {
	over := k + 12
	N := len(texts)
	// Weighted entries.
	vals := make([][]float32, N)
	for d, b := range texts {
		vals[d] = make([]float32, len(b.ids))
		for i, id := range b.ids {
			vals[d][i] = float32(math.Log1p(float64(b.counts[i])) * idf[id])
		}
	}
	// X·M for an N×over matrix M (row-major), giving V×over.
	xTimes := func(M []float32) []float32 {
		Y := make([]float32, V*over)
		for d, b := range texts {
			m := M[d*over : d*over+over]
			for i, id := range b.ids {
				x := vals[d][i]
				y := Y[int(id)*over : int(id)*over+over]
				for j, mv := range m {
					y[j] += x * mv
				}
			}
		}
		return Y
	}
	// Xᵀ·Q for a V×over matrix Q, giving N×over.
	xtTimes := func(Q []float32) []float32 {
		Z := make([]float32, N*over)
		parallel(threads, N, func(d int) {
			z := Z[d*over : d*over+over]
			for i, id := range texts[d].ids {
				x := vals[d][i]
				q := Q[int(id)*over : int(id)*over+over]
				for j, qv := range q {
					z[j] += x * qv
				}
			}
		})
		return Z
	}
	omega := make([]float32, N*over)
	for i := range omega {
		omega[i] = float32(rng.NormFloat64())
	}
	Q := xTimes(omega)
	orthonormalize(Q, V, over, threads, 1)
	for it := 0; it < 2; it++ {
		Z := xtTimes(Q)
		orthonormalize(Z, N, over, threads, 1)
		Q = xTimes(Z)
		rounds := 1
		if it == 1 {
			rounds = 2
		}
		orthonormalize(Q, V, over, threads, rounds)
	}
	// B = Qᵀ X (over × N) stored as Bt = Xᵀ Q (N × over); C = B Bᵀ.
	Bt := xtTimes(Q)
	C := make([]float64, over*over)
	for d := 0; d < N; d++ {
		r := Bt[d*over : d*over+over]
		for i := 0; i < over; i++ {
			ri := float64(r[i])
			if ri == 0 {
				continue
			}
			for j := i; j < over; j++ {
				C[i*over+j] += ri * float64(r[j])
			}
		}
	}
	for i := 0; i < over; i++ {
		for j := 0; j < i; j++ {
			C[i*over+j] = C[j*over+i]
		}
	}
	eval, evec := jacobiEigen(C, over)
	order := make([]int, over)
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return eval[order[a]] > eval[order[b]] })
	out := make([][]float32, V)
	for id := 0; id < V; id++ {
		q := Q[id*over : id*over+over]
		row := make([]float32, k)
		for c := 0; c < k; c++ {
			e := order[c]
			sigma := math.Sqrt(math.Max(eval[e], 0))
			var s float64
			for i := 0; i < over; i++ {
				s += float64(q[i]) * evec[i*over+e]
			}
			row[c] = float32(s * math.Sqrt(sigma))
		}
		out[id] = row
	}
	return out
}

// orthonormalize replaces the columns of the row-major rows×cols matrix A
// by an orthonormal basis of their span with Cholesky QR (A = QR, R from
// the Cholesky factor of AᵀA, Q = A R⁻¹), repeated rounds times: two give
// orthonormality to working precision, one is enough between power
// iterations. The Gram matrix is summed over fixed row chunks in chunk
// order, so the result does not depend on the number of threads.
func orthonormalize(A []float32, rows, cols, threads, rounds int) {
	for round := 0; round < rounds; round++ {
		const chunks = 32
		parts := make([][]float64, chunks)
		parallel(threads, chunks, func(c int) {
			g := make([]float64, cols*cols)
			row := make([]float64, cols)
			for r := c * rows / chunks; r < (c+1)*rows/chunks; r++ {
				for j, x := range A[r*cols : r*cols+cols] {
					row[j] = float64(x)
				}
				for i, xi := range row {
					if xi == 0 {
						continue
					}
					gi := g[i*cols+i : i*cols+cols]
					for j, y := range row[i:] {
						gi[j] += xi * y
					}
				}
			}
			parts[c] = g
		})
		G := parts[0]
		for _, p := range parts[1:] {
			for i := range G {
				G[i] += p[i]
			}
		}
		Rinv := upperInverse(cholesky(G, cols), cols)
		parallel(threads, chunks, func(c int) {
			x := make([]float64, cols)
			for r := c * rows / chunks; r < (c+1)*rows/chunks; r++ {
				row := A[r*cols : r*cols+cols]
				// x = row · R⁻¹
				for j := range x {
					x[j] = 0
				}
				for k, v := range row {
					if v == 0 {
						continue
					}
					rk := float64(v)
					ri := Rinv[k*cols+k : k*cols+cols]
					xs := x[k:]
					for j, y := range ri {
						xs[j] += rk * y
					}
				}
				for j := range row {
					row[j] = float32(x[j])
				}
			}
		})
	}
}

// cholesky returns the upper-triangular R with RᵀR = G (upper triangle of
// G used). A tiny ridge keeps rank-deficient Gram matrices factorable.
func cholesky(G []float64, n int) []float64 {
	var tr float64
	for i := 0; i < n; i++ {
		tr += G[i*n+i]
	}
	ridge := 1e-10 * math.Max(tr/float64(n), 1e-30)
	R := make([]float64, n*n)
	for i := 0; i < n; i++ {
		for j := i; j < n; j++ {
			s := G[i*n+j]
			if i == j {
				s += ridge
			}
			for k := 0; k < i; k++ {
				s -= R[k*n+i] * R[k*n+j]
			}
			if i == j {
				if s <= ridge {
					s = ridge
				}
				R[i*n+i] = math.Sqrt(s)
			} else {
				R[i*n+j] = s / R[i*n+i]
			}
		}
	}
	return R
}

// upperInverse inverts the upper-triangular n×n matrix R.
func upperInverse(R []float64, n int) []float64 {
	inv := make([]float64, n*n)
	for i := n - 1; i >= 0; i-- {
		inv[i*n+i] = 1 / R[i*n+i]
		for j := i + 1; j < n; j++ {
			var s float64
			for k := i + 1; k <= j; k++ {
				s += R[i*n+k] * inv[k*n+j]
			}
			inv[i*n+j] = -s / R[i*n+i]
		}
	}
	return inv
}

// jacobiEigen diagonalises the symmetric n×n matrix A (row-major, copied)
// with cyclic Jacobi rotations. It returns the eigenvalues and the
// eigenvectors as the columns of a row-major matrix.
func jacobiEigen(A []float64, n int) ([]float64, []float64) {
	a := append([]float64(nil), A...)
	v := make([]float64, n*n)
	for i := 0; i < n; i++ {
		v[i*n+i] = 1
	}
	for sweep := 0; sweep < 60; sweep++ {
		var off float64
		for i := 0; i < n; i++ {
			for j := i + 1; j < n; j++ {
				off += a[i*n+j] * a[i*n+j]
			}
		}
		if off < 1e-22 {
			break
		}
		for p := 0; p < n; p++ {
			for q := p + 1; q < n; q++ {
				apq := a[p*n+q]
				if math.Abs(apq) < 1e-300 {
					continue
				}
				theta := (a[q*n+q] - a[p*n+p]) / (2 * apq)
				t := 1 / (math.Abs(theta) + math.Sqrt(theta*theta+1))
				if theta < 0 {
					t = -t
				}
				c := 1 / math.Sqrt(t*t+1)
				s := t * c
				for k := 0; k < n; k++ {
					akp, akq := a[k*n+p], a[k*n+q]
					a[k*n+p] = c*akp - s*akq
					a[k*n+q] = s*akp + c*akq
				}
				for k := 0; k < n; k++ {
					apk, aqk := a[p*n+k], a[q*n+k]
					a[p*n+k] = c*apk - s*aqk
					a[q*n+k] = s*apk + c*aqk
				}
				for k := 0; k < n; k++ {
					vkp, vkq := v[k*n+p], v[k*n+q]
					v[k*n+p] = c*vkp - s*vkq
					v[k*n+q] = s*vkp + c*vkq
				}
			}
		}
	}
	ev := make([]float64, n)
	for i := range ev {
		ev[i] = a[i*n+i]
	}
	return ev, v
}
