// Package vindex is a flat (exhaustive) inner-product vector index over
// L2-normalised vectors, persisted byte-compatible with faiss, so an index
// written here loads in faiss and the other way round. Vectors are stored
// either as float32 (faiss IndexIDMap(IndexFlatIP); New) or as 8-bit
// scalar-quantised codes, one byte per component (faiss
// IndexIDMap(IndexScalarQuantizer QT_8bit), a quarter of the size;
// Quantize), see sq8.go.
//
// Rows are stored contiguously (row-major) and searched exhaustively with
// AVX2/FMA kernels on amd64 and unrolled pure-Go kernels elsewhere; top-k
// selection uses a bounded min-heap.
//
// An Index is safe for concurrent use: Search, IDs, Vector, Len and WriteTo
// take a read lock and run in parallel; Upsert and Delete take the write
// lock. The gateway builds an index, publishes it (package indexpub) and
// swaps loaded indexes atomically, so in practice searches never wait.
package vindex

import (
	"fmt"
	"math"
	"slices"
	"sync"
)

// Hit is one search result: the vector's id and its inner product with the
// query (the cosine similarity for unit-length vectors).
type Hit struct {
	ID    int64
	Score float32
}

// NoID is the id faiss reports for "no result"; Upsert refuses it so that a
// faiss reader never confuses a real vector with a missing one.
const NoID int64 = -1

// MaxDim is the largest dimension Read, Decode and Upsert accept.
const MaxDim = 1 << 16

// Index is a flat inner-product index. The zero value is not usable; call New
// or Read.
type Index struct {
	mu   sync.RWMutex
	dim  int
	ids  []int64         // ids[i] is the id of row i
	vecs []float32       // row i is vecs[i*dim:(i+1)*dim] (nil when quantised)
	pos  map[int64]int32 // id → row

	// A quantised index keeps codes instead of vecs: row i is
	// codes[i*dim:(i+1)*dim], decoded by sq.
	sq    *sq8
	codes []uint8
}

// New returns an empty index for vectors of dim components. Upsert fails on
// an index whose dim is not in 1..MaxDim.
func New(dim int) *Index {
	return &Index{dim: dim, pos: make(map[int64]int32)}
}

// Dim returns the number of components of every vector.
func (ix *Index) Dim() int { return ix.dim }

// Len returns the number of vectors.
func (ix *Index) Len() int {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return len(ix.ids)
}

// Grow reserves room for n more vectors, so that adding them does not
// reallocate (and briefly hold twice) the vector array.
func (ix *Index) Grow(n int) {
	if n <= 0 || ix.dim < 1 || ix.dim > MaxDim {
		return
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if len(ix.ids)+n > cap(ix.ids) {
		ix.ids = slices.Grow(ix.ids, n)
	}
	switch {
	case ix.sq != nil:
		if len(ix.codes)+n*ix.dim > cap(ix.codes) {
			ix.codes = slices.Grow(ix.codes, n*ix.dim)
		}
	case len(ix.vecs)+n*ix.dim > cap(ix.vecs):
		ix.vecs = slices.Grow(ix.vecs, n*ix.dim)
	}
}

// Upsert stores vec under id, replacing the vector already stored under id.
// vec is copied. It fails when len(vec) differs from Dim, when vec holds a NaN
// or an infinity, or when id is NoID. Vectors should be L2-normalised (scores
// are then cosine similarities); Upsert does not normalise them. A
// quantised index stores vec's codes in its ranges (components outside a
// range are clamped to it); Quantize a float index to set the ranges.
func (ix *Index) Upsert(id int64, vec []float32) error {
	if ix.dim < 1 || ix.dim > MaxDim {
		return fmt.Errorf("vindex: index dimension %d is out of range 1..%d", ix.dim, MaxDim)
	}
	if len(vec) != ix.dim {
		return fmt.Errorf("vindex: vector for id %d has %d components, the index has %d", id, len(vec), ix.dim)
	}
	if id == NoID {
		return fmt.Errorf("vindex: id %d is reserved (faiss reports it for \"no result\")", NoID)
	}
	for i, v := range vec {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("vindex: vector for id %d has a non-finite component %v at %d", id, v, i)
		}
	}
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if p, ok := ix.pos[id]; ok {
		if ix.sq != nil {
			ix.sq.encode(ix.codes[int(p)*ix.dim:(int(p)+1)*ix.dim], vec)
		} else {
			copy(ix.vecs[int(p)*ix.dim:], vec)
		}
		return nil
	}
	if len(ix.ids) >= math.MaxInt32 {
		return fmt.Errorf("vindex: index is full (%d vectors)", len(ix.ids))
	}
	ix.pos[id] = int32(len(ix.ids))
	ix.ids = append(ix.ids, id)
	if ix.sq != nil {
		n := len(ix.codes)
		ix.codes = slices.Grow(ix.codes, ix.dim)[:n+ix.dim]
		ix.sq.encode(ix.codes[n:], vec)
	} else {
		ix.vecs = append(ix.vecs, vec...)
	}
	return nil
}

// Delete removes the vectors stored under ids and returns how many it
// removed; unknown ids are ignored. The last row moves into the freed slot,
// so the order of IDs changes.
func (ix *Index) Delete(ids ...int64) int {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	removed := 0
	for _, id := range ids {
		p, ok := ix.pos[id]
		if !ok {
			continue
		}
		last := len(ix.ids) - 1
		if int(p) != last {
			moved := ix.ids[last]
			ix.ids[p] = moved
			if ix.sq != nil {
				copy(ix.codes[int(p)*ix.dim:(int(p)+1)*ix.dim], ix.codes[last*ix.dim:])
			} else {
				copy(ix.vecs[int(p)*ix.dim:(int(p)+1)*ix.dim], ix.vecs[last*ix.dim:])
			}
			ix.pos[moved] = p
		}
		ix.ids = ix.ids[:last]
		if ix.sq != nil {
			ix.codes = ix.codes[:last*ix.dim]
		} else {
			ix.vecs = ix.vecs[:last*ix.dim]
		}
		delete(ix.pos, id)
		removed++
	}
	return removed
}

// IDs returns the ids in storage order (a copy).
func (ix *Index) IDs() []int64 {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return slices.Clone(ix.ids)
}

// Vector returns a copy of the vector stored under id (of a quantised
// index: its reconstruction, as faiss decodes it).
func (ix *Index) Vector(id int64) ([]float32, bool) {
	return ix.AppendVector(nil, id)
}

// AppendVector appends the vector stored under id to dst and returns the
// extended slice (Vector without an allocation per call, for copying many
// vectors through one buffer).
func (ix *Index) AppendVector(dst []float32, id int64) ([]float32, bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	p, ok := ix.pos[id]
	if !ok {
		return dst, false
	}
	if ix.sq != nil {
		n := len(dst)
		dst = slices.Grow(dst, ix.dim)[:n+ix.dim]
		ix.sq.decode(dst[n:], ix.codes[int(p)*ix.dim:(int(p)+1)*ix.dim])
		return dst, true
	}
	return append(dst, ix.vecs[int(p)*ix.dim:(int(p)+1)*ix.dim]...), true
}

// blockRows is how many rows Search scores per kernel call: 64 KiB of scores
// and a block of rows that stays in cache while the heap consumes it.
const blockRows = 256

// Search returns the k vectors with the largest inner product with q, best
// first; equal scores are ordered by ascending id. allow, when not nil,
// restricts the search to the ids for which it returns true; it is called
// at most once per stored vector, under the index's read lock, so it must not
// call Upsert or Delete. Search returns nil when len(q) differs from Dim or
// k < 1.
func (ix *Index) Search(q []float32, k int, allow func(id int64) bool) []Hit {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	return ix.search([][]float32{q}, k, allow, blockRows, 0, len(ix.ids))[0]
}

// multiBlockBytes bounds the block of rows SearchMulti scores against every
// query before moving on, so that the block stays in cache across queries.
const multiBlockBytes = 128 << 10

// SearchMulti is Search for several queries in one pass over the stored
// vectors (one query: exactly Search): each block of rows is scored against
// every query while it is in cache, so n queries cost far less memory traffic than n calls to Search
// (the scan is memory-bound once the index outgrows the cache). Result i
// is Search(qs[i], k, allow) (nil for a query of the wrong length); allow
// is still called at most once per stored vector.
func (ix *Index) SearchMulti(qs [][]float32, k int, allow func(id int64) bool) [][]Hit {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	rows := blockRows
	if len(qs) > 1 && ix.dim > 0 {
		width := 4 * ix.dim // bytes per row
		if ix.sq != nil {
			width = ix.dim
		}
		rows = min(blockRows, max(8, multiBlockBytes/width))
	}
	return ix.search(qs, k, allow, rows, 0, len(ix.ids))
}

// search scores blocks of rows [lo, hi) against each usable query; the
// caller holds the read lock.
func (ix *Index) search(qs [][]float32, k int, allow func(id int64) bool, rows, lo, hi int) [][]Hit {
	out := make([][]Hit, len(qs))
	n, dim := hi, ix.dim
	if k < 1 || n <= lo {
		return out
	}
	type state struct {
		q    []float32
		top  topK
		thr  float32
		bias float32   // quantised index: score = bias + q·codes
		sc   []float32 // quantised index: the block's scores
	}
	var st []*state
	idx := make([]int, 0, len(qs))
	for i, q := range qs {
		if len(q) != dim {
			continue
		}
		s := &state{q: q, top: topK{h: make([]Hit, 0, min(k, n-lo)), k: min(k, n-lo)}, thr: float32(math.Inf(-1))}
		if ix.sq != nil {
			s.q, s.bias = ix.sq.query(q)
			s.sc = make([]float32, blockRows)
		}
		st = append(st, s)
		idx = append(idx, i)
	}
	if len(st) == 0 {
		return out
	}
	var (
		scores  [blockRows]float32
		allowed [blockRows]bool
	)
	for start := lo; start < n; start += rows {
		end := min(start+rows, n)
		ids, sc := ix.ids[start:end], scores[:end-start]
		var (
			block  []float32
			cblock []uint8
		)
		if ix.sq != nil {
			cblock = ix.codes[start*dim : end*dim]
		} else {
			block = ix.vecs[start*dim : end*dim]
		}
		m := len(ids)
		if allow != nil {
			m = 0
			for j, id := range ids {
				allowed[j] = allow(id)
				if allowed[j] {
					m++
				}
			}
			if m == 0 {
				continue
			}
		}
		if ix.sq != nil {
			// Two queries at a time: each row's codes are converted once
			// for both.
			for i := 0; i < len(st); i += 2 {
				a := st[i]
				if i+1 == len(st) {
					for j := range ids {
						if allow == nil || allowed[j] {
							a.sc[j] = a.bias + dotCodes(a.q, cblock[j*dim:(j+1)*dim])
						}
					}
					continue
				}
				b := st[i+1]
				for j := range ids {
					if allow == nil || allowed[j] {
						x, y := dotCodes2(a.q, b.q, cblock[j*dim:(j+1)*dim])
						a.sc[j], b.sc[j] = a.bias+x, b.bias+y
					}
				}
			}
		}
		for _, s := range st {
			sc := sc
			switch {
			case ix.sq != nil:
				sc = s.sc[:len(ids)]
			case allow == nil || m*4 >= len(ids):
				// Scoring the whole block with the batch kernel is
				// cheaper than picking rows.
				dotBatch(s.q, block, sc)
			default:
				for j := range ids {
					if allowed[j] {
						sc[j] = Dot(s.q, block[j*dim:(j+1)*dim])
					}
				}
			}
			for j, v := range sc {
				// Most rows lose to the current k-th best: skip them
				// without a call.
				if v < s.thr || allow != nil && !allowed[j] {
					continue
				}
				s.top.offer(ids[j], v)
				if len(s.top.h) == s.top.k {
					s.thr = s.top.h[0].Score
				}
			}
		}
	}
	for i, s := range st {
		out[idx[i]] = s.top.sorted()
	}
	return out
}

// MaxDot returns the largest inner product of the vector stored under id
// with any of qs (queries of the wrong length are skipped), without copying
// the vector; ok is false when id is not stored or no query fits.
func (ix *Index) MaxDot(id int64, qs ...[]float32) (best float32, ok bool) {
	ix.mu.RLock()
	defer ix.mu.RUnlock()
	p, found := ix.pos[id]
	if !found {
		return 0, false
	}
	for _, q := range qs {
		if len(q) != ix.dim {
			continue
		}
		var d float32
		if ix.sq != nil {
			d = ix.sq.dot(q, ix.codes[int(p)*ix.dim:(int(p)+1)*ix.dim])
		} else {
			d = Dot(q, ix.vecs[int(p)*ix.dim:(int(p)+1)*ix.dim])
		}
		if !ok || d > best {
			best, ok = d, true
		}
	}
	return best, ok
}

// topK keeps the k best hits seen so far in a min-heap whose root is the
// worst of them.
type topK struct {
	h []Hit
	k int
}

// worse reports whether a ranks below b: lower score, or equal score and
// larger id.
func worse(a, b Hit) bool {
	return a.Score < b.Score || (a.Score == b.Score && a.ID > b.ID)
}

func (t *topK) offer(id int64, score float32) {
	if len(t.h) < t.k {
		t.h = append(t.h, Hit{id, score})
		// sift up
		i := len(t.h) - 1
		for i > 0 {
			p := (i - 1) / 2
			if !worse(t.h[i], t.h[p]) {
				break
			}
			t.h[i], t.h[p] = t.h[p], t.h[i]
			i = p
		}
		return
	}
	root := t.h[0]
	if score < root.Score || (score == root.Score && id > root.ID) || score != score {
		return
	}
	if score == root.Score && id == root.ID {
		return
	}
	t.h[0] = Hit{id, score}
	t.down(0)
}

func (t *topK) down(i int) {
	h := t.h
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && worse(h[r], h[l]) {
			m = r
		}
		if !worse(h[m], h[i]) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// sorted returns the hits best first.
func (t *topK) sorted() []Hit {
	sortHits(t.h)
	return t.h
}

// sortHits orders hits best first.
func sortHits(h []Hit) {
	slices.SortFunc(h, func(a, b Hit) int {
		switch {
		case worse(b, a):
			return -1
		case worse(a, b):
			return 1
		}
		return 0
	})
}
