package train

import (
	"math"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// numShards fixes how gradients are split for accumulation. It does not
// depend on the number of threads, so the summation order (and therefore
// every byte of the result) is the same whatever Threads is.
const numShards = 16

// table is the trainable token-embedding table with lazy (row-sparse) Adam
// state.
type table struct {
	V, D int
	E    []float32
	m, v []float32
	step int
}

func newTable(V, D int) *table {
	return &table{V: V, D: D, E: make([]float32, V*D), m: make([]float32, V*D), v: make([]float32, V*D)}
}

func (t *table) row(id int32) []float32 { return t.E[int(id)*t.D : int(id)*t.D+t.D] }

// embed writes the unnormalised sum of the bag's rows into out and returns
// its norm.
func (t *table) embed(b bag, out []float32) float32 {
	for j := range out {
		out[j] = 0
	}
	for i, id := range b.ids {
		axpy(b.counts[i], t.row(id), out)
	}
	return norm(out)
}

func norm(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return float32(math.Sqrt(s))
}

func dot(a, b []float32) float32 { return vindex.Dot(a, b) }

// axpy adds a·x to y (len(x) == len(y)).
func axpy(a float32, x, y []float32) {
	n := len(x)
	y = y[:n]
	i := 0
	for ; i+4 <= n; i += 4 {
		xs := x[i : i+4 : i+4]
		ys := y[i : i+4 : i+4]
		ys[0] += a * xs[0]
		ys[1] += a * xs[1]
		ys[2] += a * xs[2]
		ys[3] += a * xs[3]
	}
	for ; i < n; i++ {
		y[i] += a * x[i]
	}
}

// parallel runs fn(i) for i in [0, n) on up to threads goroutines. Each index
// is handled by exactly one goroutine, so results written per index are
// deterministic.
func parallel(threads, n int, fn func(i int)) {
	if threads <= 1 || n < 2 {
		for i := 0; i < n; i++ {
			fn(i)
		}
		return
	}
	if threads > n {
		threads = n
	}
	var wg sync.WaitGroup
	var next atomic.Int64
	for w := 0; w < threads; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				fn(i)
			}
		}()
	}
	wg.Wait()
}

// sparseGrad accumulates gradient rows for the tokens one shard touches.
type sparseGrad struct {
	D       int
	slot    []int32 // token -> row in rows, or -1
	rows    []float32
	touched []int32
}

func newSparseGrad(V, D int) *sparseGrad {
	s := &sparseGrad{D: D, slot: make([]int32, V)}
	for i := range s.slot {
		s.slot[i] = -1
	}
	return s
}

func (s *sparseGrad) add(id int32, scale float32, g []float32) {
	k := s.slot[id]
	if k < 0 {
		k = int32(len(s.touched))
		s.slot[id] = k
		s.touched = append(s.touched, id)
		s.rows = append(s.rows, make([]float32, s.D)...)
	}
	axpy(scale, g, s.rows[int(k)*s.D:int(k)*s.D+s.D])
}

func (s *sparseGrad) get(id int32) []float32 {
	k := s.slot[id]
	if k < 0 {
		return nil
	}
	return s.rows[int(k)*s.D : int(k)*s.D+s.D]
}

func (s *sparseGrad) reset() {
	for _, id := range s.touched {
		s.slot[id] = -1
	}
	s.touched = s.touched[:0]
	s.rows = s.rows[:0]
}

// adamConfig holds the optimiser settings.
type adamConfig struct {
	lr, beta1, beta2, eps float64
}

// apply reduces the shard gradients in shard order and takes one lazy Adam
// step on every touched row.
func (t *table) apply(shards []*sparseGrad, cfg adamConfig, threads int) {
	t.step++
	seen := map[int32]bool{}
	var ids []int32
	for _, s := range shards {
		for _, id := range s.touched {
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	bc1 := 1 - math.Pow(cfg.beta1, float64(t.step))
	bc2 := 1 - math.Pow(cfg.beta2, float64(t.step))
	lr := float32(cfg.lr * math.Sqrt(bc2) / bc1)
	b1, b2, eps := float32(cfg.beta1), float32(cfg.beta2), float32(cfg.eps)
	parallel(threads, (len(ids)+63)/64, func(chunk int) {
		g := make([]float32, t.D)
		end := min((chunk+1)*64, len(ids))
		for _, id := range ids[chunk*64 : end] {
			for j := range g {
				g[j] = 0
			}
			for _, s := range shards {
				if r := s.get(id); r != nil {
					for j, x := range r {
						g[j] += x
					}
				}
			}
			off := int(id) * t.D
			for j, gj := range g {
				m := b1*t.m[off+j] + (1-b1)*gj
				v := b2*t.v[off+j] + (1-b2)*gj*gj
				t.m[off+j], t.v[off+j] = m, v
				t.E[off+j] -= lr * m / (float32(math.Sqrt(float64(v))) + eps)
			}
		}
	})
}
