package vindex

import (
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

func unit(v ...float32) []float32 {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	n = math.Sqrt(n)
	out := make([]float32, len(v))
	for i, x := range v {
		out[i] = float32(float64(x) / n)
	}
	return out
}

func hitIDs(h []Hit) []int64 {
	ids := make([]int64, len(h))
	for i, x := range h {
		ids[i] = x.ID
	}
	return ids
}

func TestSearch(t *testing.T) {
	// Four 2-d vectors; ids 7 and 3 hold the same vector, so they tie.
	ix := New(2)
	for _, e := range []struct {
		id  int64
		vec []float32
	}{
		{7, unit(1, 0)},
		{3, unit(1, 0)},
		{10, unit(1, 1)},
		{20, unit(0, 1)},
		{-5, unit(-1, 0)},
	} {
		if err := ix.Upsert(e.id, e.vec); err != nil {
			t.Fatal(err)
		}
	}
	even := func(id int64) bool { return id%2 == 0 }
	tests := []struct {
		name  string
		q     []float32
		k     int
		allow func(int64) bool
		want  []int64
	}{
		{"ties by ascending id", unit(1, 0), 2, nil, []int64{3, 7}},
		{"full order", unit(1, 0), 5, nil, []int64{3, 7, 10, 20, -5}},
		{"k larger than n, zero scores tie", unit(0, 1), 50, nil, []int64{20, 10, -5, 3, 7}},
		{"k of one", unit(1, 1), 1, nil, []int64{10}},
		{"allow filter", unit(1, 0), 5, even, []int64{10, 20}},
		{"allow nothing", unit(1, 0), 5, func(int64) bool { return false }, nil},
		{"k zero", unit(1, 0), 0, nil, nil},
		{"negative k", unit(1, 0), -1, nil, nil},
		{"wrong query dim", unit(1, 0, 0), 3, nil, nil},
		{"nil query", nil, 3, nil, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ix.Search(tc.q, tc.k, tc.allow)
			if !slices.Equal(hitIDs(got), tc.want) {
				t.Fatalf("Search = %v, want ids %v", got, tc.want)
			}
			for i := 1; i < len(got); i++ {
				if got[i].Score > got[i-1].Score {
					t.Fatalf("scores not descending: %v", got)
				}
			}
		})
	}
	if got := ix.Search(unit(1, 0), 1, nil); math.Abs(float64(got[0].Score)-1) > 1e-6 {
		t.Errorf("self score = %v, want 1", got[0].Score)
	}
	if New(4).Search(unit(1, 0, 0, 0), 3, nil) != nil {
		t.Error("search of an empty index returned hits")
	}
}

func TestUpsertErrors(t *testing.T) {
	tests := []struct {
		name string
		dim  int
		id   int64
		vec  []float32
		want string
	}{
		{"short vector", 3, 1, []float32{1, 0}, "has 2 components, the index has 3"},
		{"long vector", 3, 1, []float32{1, 0, 0, 0}, "has 4 components"},
		{"NaN", 2, 1, []float32{float32(math.NaN()), 0}, "non-finite"},
		{"Inf", 2, 1, []float32{0, float32(math.Inf(1))}, "non-finite"},
		{"reserved id", 2, NoID, []float32{1, 0}, "reserved"},
		{"zero dim", 0, 1, nil, "out of range"},
		{"huge dim", MaxDim + 1, 1, make([]float32, MaxDim+1), "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ix := New(tc.dim)
			err := ix.Upsert(tc.id, tc.vec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Upsert error = %v, want one containing %q", err, tc.want)
			}
			if ix.Len() != 0 {
				t.Fatalf("failed Upsert stored a vector")
			}
		})
	}
}

func TestUpsertReplacesAndDelete(t *testing.T) {
	ix := New(2)
	for id := int64(1); id <= 5; id++ {
		if err := ix.Upsert(id, unit(float32(id), 1)); err != nil {
			t.Fatal(err)
		}
	}
	in := unit(0, 1)
	if err := ix.Upsert(3, in); err != nil {
		t.Fatal(err)
	}
	in[0] = 99 // Upsert must have copied
	if ix.Len() != 5 {
		t.Fatalf("Len after replacing = %d, want 5", ix.Len())
	}
	if v, _ := ix.Vector(3); !slices.Equal(v, unit(0, 1)) {
		t.Fatalf("Vector(3) = %v, want the replacement", v)
	}
	if got := ix.Search(unit(0, 1), 1, nil); got[0].ID != 3 {
		t.Fatalf("best hit %v, want id 3", got)
	}

	if n := ix.Delete(1, 42, 1, 5); n != 2 {
		t.Fatalf("Delete removed %d, want 2", n)
	}
	ids := ix.IDs()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	if !slices.Equal(ids, []int64{2, 3, 4}) {
		t.Fatalf("IDs after delete = %v", ids)
	}
	for _, id := range []int64{2, 3, 4} {
		v, ok := ix.Vector(id)
		want := unit(float32(id), 1)
		if id == 3 {
			want = unit(0, 1)
		}
		if !ok || !slices.Equal(v, want) {
			t.Errorf("Vector(%d) = %v %v after delete, want %v", id, v, ok, want)
		}
	}
	if _, ok := ix.Vector(1); ok {
		t.Error("deleted vector still there")
	}
	if got := hitIDs(ix.Search(unit(1, 0), 10, nil)); len(got) != 3 || slices.Contains(got, 1) || slices.Contains(got, 5) {
		t.Fatalf("search after delete = %v", got)
	}
	if n := ix.Delete(2, 3, 4); n != 3 || ix.Len() != 0 {
		t.Fatalf("deleting the rest removed %d, Len %d", n, ix.Len())
	}
	if err := ix.Upsert(9, unit(1, 1)); err != nil || ix.Len() != 1 {
		t.Fatalf("reuse after emptying: %v, Len %d", err, ix.Len())
	}
}

// bruteForce ranks every vector by the float64 inner product.
func bruteForce(ix *Index, q []float32, k int) []Hit {
	var all []Hit
	for _, id := range ix.IDs() {
		v, _ := ix.Vector(id)
		all = append(all, Hit{id, float32(naiveDot(q, v))})
	}
	slices.SortFunc(all, func(a, b Hit) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return all[:min(k, len(all))]
}

// sameRanking checks that got and want list the same ids in the same order,
// tolerating swaps between hits whose scores differ by at most tol.
func sameRanking(t *testing.T, got, want []Hit, tol float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d hits, want %d", len(got), len(want))
	}
	for i := range got {
		if math.Abs(float64(got[i].Score-want[i].Score)) > tol {
			t.Fatalf("hit %d: score %v, want %v (got %v, want %v)", i, got[i].Score, want[i].Score, got, want)
		}
		if got[i].ID != want[i].ID {
			// Accept only a near-tie swap.
			j := slices.IndexFunc(want, func(h Hit) bool { return h.ID == got[i].ID })
			if j < 0 || math.Abs(float64(want[j].Score-want[i].Score)) > tol {
				t.Fatalf("hit %d: id %d, want %d (got %v, want %v)", i, got[i].ID, want[i].ID, got, want)
			}
		}
	}
}

func TestSearchMatchesBruteForce(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for _, kern := range kernels {
		ok, restore := setKernel(kern)
		if !ok {
			continue
		}
		for _, dim := range []int{5, 67, 256} {
			ix := New(dim)
			for i := range 1500 {
				if err := ix.Upsert(int64(r.Uint64()>>1)+int64(i%3), randUnit(r, dim)); err != nil {
					t.Fatal(err)
				}
			}
			allow := func(id int64) bool { return id%3 != 0 }
			for range 20 {
				q := randUnit(r, dim)
				sameRanking(t, ix.Search(q, 10, nil), bruteForce(ix, q, 10), 1e-5)
				got := ix.Search(q, 7, allow)
				for _, h := range got {
					if !allow(h.ID) {
						t.Fatalf("disallowed id %d returned", h.ID)
					}
				}
				var want []Hit
				for _, h := range bruteForce(ix, q, ix.Len()) {
					if allow(h.ID) && len(want) < 7 {
						want = append(want, h)
					}
				}
				sameRanking(t, got, want, 1e-5)
			}
		}
		restore()
	}
}

func TestConcurrentSearchAndWrite(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	const dim = 32
	ix := New(dim)
	for i := range 200 {
		ix.Upsert(int64(i), randUnit(r, dim))
	}
	q := randUnit(r, dim)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 200 {
				if hits := ix.Search(q, 5, nil); len(hits) != 5 {
					t.Errorf("searcher %d got %d hits", g, len(hits))
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		wr := rand.New(rand.NewPCG(9, 10))
		for i := range 400 {
			id := int64(200 + i)
			ix.Upsert(id, randUnit(wr, dim))
			ix.Delete(id - 100)
		}
	}()
	wg.Wait()
	if ix.Len() != 200 {
		t.Fatalf("Len = %d after balanced upserts and deletes, want 200", ix.Len())
	}
}

// TestSearchMulti: each result is what Search gives for that query, with
// and without an allow filter (sparse and dense), allow is called once per
// stored vector, and a query of the wrong length gets nil.
func TestSearchMulti(t *testing.T) {
	for _, dim := range []int{7, 64, 1536} {
		ix := randomIndex(t, uint64(dim), 700, dim)
		r := rand.New(rand.NewPCG(9, uint64(dim)))
		qs := [][]float32{randUnit(r, dim), randUnit(r, dim), make([]float32, dim+1), randUnit(r, dim)}
		for _, tc := range []struct {
			name  string
			allow func(int64) bool
		}{
			{"all", nil},
			{"half", func(id int64) bool { return id%2 == 0 }},
			{"few", func(id int64) bool { return id%13 == 0 }},
			{"none", func(int64) bool { return false }},
		} {
			calls := 0
			allow := tc.allow
			if allow != nil {
				allow = func(id int64) bool { calls++; return tc.allow(id) }
			}
			got := ix.SearchMulti(qs, 25, allow)
			if len(got) != len(qs) {
				t.Fatalf("dim %d %s: %d results for %d queries", dim, tc.name, len(got), len(qs))
			}
			if tc.allow != nil && calls != ix.Len() {
				t.Errorf("dim %d %s: allow called %d times for %d vectors", dim, tc.name, calls, ix.Len())
			}
			for i, q := range qs {
				// The kernels may round the last bit differently with another
				// block size: equal up to 1e-5, with the same tools unless tied.
				want := ix.Search(q, 25, tc.allow)
				if !sameHits(got[i], want, 1e-5) {
					t.Errorf("dim %d %s query %d: SearchMulti %v, Search %v", dim, tc.name, i, got[i], want)
				}
			}
			if got[2] != nil {
				t.Errorf("dim %d %s: a query of the wrong length got %v", dim, tc.name, got[2])
			}
		}
	}
}

func TestMaxDot(t *testing.T) {
	ix := randomIndex(t, 3, 50, 32)
	r := rand.New(rand.NewPCG(4, 5))
	a, b := randUnit(r, 32), randUnit(r, 32)
	id := ix.IDs()[7]
	v, _ := ix.Vector(id)
	want := max(Dot(a, v), Dot(b, v))
	if got, ok := ix.MaxDot(id, a, make([]float32, 3), b); !ok || got != want {
		t.Errorf("MaxDot = %v, %v; want %v", got, ok, want)
	}
	if _, ok := ix.MaxDot(id, make([]float32, 3)); ok {
		t.Error("MaxDot with no usable query reported ok")
	}
	if _, ok := ix.MaxDot(-5, a); ok {
		t.Error("MaxDot of an unknown id reported ok")
	}
}

// sameHits reports whether two result lists have the same length, scores
// equal within eps position by position, and the same ids except among
// scores within eps of each other.
func sameHits(a, b []Hit, eps float32) bool {
	if len(a) != len(b) || (a == nil) != (b == nil) {
		return false
	}
	for i := range a {
		if d := a[i].Score - b[i].Score; d > eps || d < -eps {
			return false
		}
		if a[i].ID == b[i].ID {
			continue
		}
		tied := false
		for j := range b {
			if b[j].ID == a[i].ID {
				d := b[j].Score - a[i].Score
				tied = d <= eps && d >= -eps
			}
		}
		if !tied && i < len(a)-1 {
			return false
		}
	}
	return true
}

func TestAppendVector(t *testing.T) {
	ix := randomIndex(t, 9, 20, 8)
	var buf []float32
	for _, id := range ix.IDs() {
		want, _ := ix.Vector(id)
		var ok bool
		buf, ok = ix.AppendVector(buf[:0], id)
		if !ok || !slices.Equal(buf, want) {
			t.Fatalf("AppendVector(%d) = %v, %v; want %v", id, buf, ok, want)
		}
	}
	if got, ok := ix.AppendVector([]float32{1}, 1<<50); ok || len(got) != 1 {
		t.Fatalf("unknown id: %v, %v", got, ok)
	}
}
