package vindex

import (
	"fmt"
	"math"
)

// sq8 is faiss's ScalarQuantizer with QT_8bit (non-uniform): component j of
// a vector is stored as one byte c and decoded as
//
//	vmin[j] + vdiff[j] * ((c + 0.5) / 255)
//
// so each component has its own range [vmin, vmin+vdiff] split in 255
// steps, and the reconstruction error is at most half a step (vdiff/510).
type sq8 struct {
	vmin, vdiff []float32
}

// minRange is the smallest range Quantize gives a dimension: a (nearly)
// constant component still gets steps large enough that decoding and
// encoding again gives back the same code, which keeps an incremental
// rebuild of an unchanged catalog byte-identical.
const minRange = 1e-3

// faiss ScalarQuantizer constants (faiss/impl/ScalarQuantizer.h).
const (
	sqQT8bit     = 0 // QuantizerType QT_8bit
	sqRSMinMax   = 0 // RangeStat RS_minmax
	fourccSQ     = "IxSQ"
	sqStep       = 255
	maxSQTrained = 2 * MaxDim
)

// encode writes the codes of vec into dst: the nearest reconstruction of
// each component (faiss's rounding), clamped to the range.
func (q *sq8) encode(dst []uint8, vec []float32) {
	for j, x := range vec {
		d := float64(q.vdiff[j])
		if d <= 0 {
			dst[j] = 0
			continue
		}
		t := (float64(x) - float64(q.vmin[j])) / d * sqStep
		switch {
		case !(t > 0): // also NaN
			dst[j] = 0
		case t >= sqStep:
			dst[j] = sqStep
		default:
			dst[j] = uint8(t)
		}
	}
}

// decode writes the reconstruction of codes into dst, computed in float32
// exactly as faiss does.
func (q *sq8) decode(dst []float32, codes []uint8) {
	for j, c := range codes {
		dst[j] = q.vmin[j] + q.vdiff[j]*((float32(c)+0.5)/sqStep)
	}
}

// query returns the per-code weights and the constant of a query: the
// inner product of qv with a row's reconstruction is bias + w·codes.
func (q *sq8) query(qv []float32) (w []float32, bias float32) {
	w = make([]float32, len(qv))
	var b float64
	for j, x := range qv {
		w[j] = x * q.vdiff[j] / sqStep
		b += float64(x) * (float64(q.vmin[j]) + 0.5*float64(q.vdiff[j])/sqStep)
	}
	return w, float32(b)
}

// dot is the inner product of qv with the reconstruction of codes, without
// allocating (for a few rows; Search uses query and dotCodes).
func (q *sq8) dot(qv []float32, codes []uint8) float32 {
	var s float32
	for j, c := range codes[:len(qv)] {
		s += qv[j] * (q.vmin[j] + q.vdiff[j]*((float32(c)+0.5)/sqStep))
	}
	return s
}

// dotCodes returns w·codes over their common length.
func dotCodes(w []float32, codes []uint8) float32 {
	n := min(len(w), len(codes))
	if n == 0 {
		return 0
	}
	if useAVX2 && n >= 8 {
		n8 := n &^ 7
		s := dotU8AVX2(&w[0], &codes[0], n8)
		for i := n8; i < n; i++ {
			s += w[i] * float32(codes[i])
		}
		return s
	}
	return dotGeneric(w[:n], codes[:n])
}

// Quantized reports whether the index stores 8-bit codes (Quantize) rather
// than float32 vectors.
func (ix *Index) Quantized() bool { return ix.sq != nil }

// Quantize returns an 8-bit scalar-quantised copy of the index (faiss
// IndexScalarQuantizer with QT_8bit, inner product): one byte per
// component instead of four, each component decoded in its dimension's
// range as faiss does, so that scores move by at most half a step of the
// range per component (about 0.001 for unit vectors). Search, MaxDot and
// Vector then work on the codes; WriteTo writes
// IndexIDMap(IndexScalarQuantizer), which faiss reads and searches.
//
// Each dimension's range is [min, max] of that component over the stored
// vectors (at least minRange wide), except where like (a quantised index,
// usually the previous build) already has a range that holds every stored
// value of that component: then like's range is kept. Re-quantising the
// vectors decoded from like (an incremental rebuild) then gives back the
// same codes, and the same catalog gives the same bytes. On an index that
// is already quantised, Quantize returns it.
func (ix *Index) Quantize(like *Index) *Index {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	if ix.sq != nil {
		return ix
	}
	dim, n := ix.dim, len(ix.ids)
	lo := make([]float32, dim)
	hi := make([]float32, dim)
	for j := range dim {
		lo[j], hi[j] = float32(math.Inf(1)), float32(math.Inf(-1))
	}
	for r := range n {
		row := ix.vecs[r*dim : (r+1)*dim]
		for j, x := range row {
			lo[j] = min(lo[j], x)
			hi[j] = max(hi[j], x)
		}
	}
	q := &sq8{vmin: make([]float32, dim), vdiff: make([]float32, dim)}
	var prev *sq8
	if like != nil && like != ix {
		like.mu.RLock()
		if like.sq != nil && like.dim == dim {
			prev = like.sq
		}
		like.mu.RUnlock()
	}
	for j := range dim {
		if n == 0 {
			q.vmin[j], q.vdiff[j] = 0, minRange
			continue
		}
		// like's range holds every value a code of it decodes to (up to
		// vmin + vdiff·255.5/255), so values read back from it fit.
		if prev != nil && lo[j] >= prev.vmin[j] && float64(hi[j]) <= float64(prev.vmin[j])+float64(prev.vdiff[j])*256/sqStep {
			q.vmin[j], q.vdiff[j] = prev.vmin[j], prev.vdiff[j]
			continue
		}
		q.vmin[j], q.vdiff[j] = lo[j], max(hi[j]-lo[j], minRange)
	}
	out := &Index{dim: dim, ids: append([]int64(nil), ix.ids...), pos: make(map[int64]int32, n), sq: q, codes: make([]uint8, n*dim)}
	for r, id := range ix.ids {
		out.pos[id] = int32(r)
		q.encode(out.codes[r*dim:(r+1)*dim], ix.vecs[r*dim:(r+1)*dim])
	}
	return out
}

// checkSQ validates quantiser parameters read from a file.
func checkSQ(q *sq8) error {
	for j := range q.vmin {
		lo, d := float64(q.vmin[j]), float64(q.vdiff[j])
		if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(d) || math.IsInf(d, 0) || d < 0 {
			return fmt.Errorf("%w: scalar quantizer range %d is [%v, +%v]", ErrCorrupt, j, q.vmin[j], q.vdiff[j])
		}
	}
	return nil
}

// dotCodes2 is dotCodes for two weight vectors over the same codes (the
// codes are read and converted once); each result equals dotCodes'.
func dotCodes2(w1, w2 []float32, codes []uint8) (float32, float32) {
	n := min(len(w1), len(w2), len(codes))
	if n == 0 {
		return 0, 0
	}
	if useAVX2 && n >= 8 {
		n8 := n &^ 7
		var out [2]float32
		dotU8x2AVX2(&w1[0], &w2[0], &codes[0], n8, &out[0])
		for i := n8; i < n; i++ {
			out[0] += w1[i] * float32(codes[i])
		}
		for i := n8; i < n; i++ {
			out[1] += w2[i] * float32(codes[i])
		}
		return out[0], out[1]
	}
	return dotGeneric(w1[:n], codes[:n]), dotGeneric(w2[:n], codes[:n])
}
