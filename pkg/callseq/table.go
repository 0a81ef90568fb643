package callseq

import (
	"sort"
)

// Smoothing and strength of the counts (chosen a priori, see
// docs/retrieval.md "Related tools"):
//
//   - a pair's share is N / (total + Alpha), where total counts every pair
//     that starts at the same tool (for a successor) or ends at the same
//     tool (for a predecessor): a tool called a few times cannot give any
//     of its pairs a large share;
//   - a pair counted fewer than MinCount times is not listed at all (it
//     still counts in the totals): one call after another by chance, or
//     a session exploring, does not make a related tool;
//   - a pair is strong when it was counted at least StrongCount times and
//     its share is at least StrongShare; strong pairs rank above the
//     related tools read from the catalog's structure, the others below.
const (
	Alpha       = 5.0
	MinCount    = 2
	StrongCount = 3
	StrongShare = 0.2
)

// Edge is one tool used with another: its id, the pair's count and share,
// and whether it is strong.
type Edge struct {
	Tool   string
	N      int64
	Share  float64
	Strong bool
}

// Table answers which tools a tool is called with: the tools called right
// after it and right before it, by share. It is immutable and safe for
// concurrent use.
type Table struct {
	with  map[string][]Edge
	pairs int
}

// NewTable builds the table from counts, leaving out the pairs one of
// whose tools is not in exists (nil: keep all) and invalid ones. Counts of
// the same pair are added up.
func NewTable(counts []Count, exists func(toolID string) bool) *Table {
	type pair struct{ from, to string }
	sum := map[pair]int64{}
	out, in := map[string]int64{}, map[string]int64{}
	for _, c := range counts {
		if c.N <= 0 || c.From == "" || c.To == "" || c.From == c.To {
			continue
		}
		if exists != nil && (!exists(c.From) || !exists(c.To)) {
			continue
		}
		sum[pair{c.From, c.To}] += c.N
		out[c.From] += c.N
		in[c.To] += c.N
	}
	best := map[pair]Edge{} // (tool, other) → the better of the two directions
	add := func(tool, other string, n, total int64) {
		if n < MinCount {
			return
		}
		e := Edge{Tool: other, N: n, Share: float64(n) / (float64(total) + Alpha)}
		e.Strong = n >= StrongCount && e.Share >= StrongShare
		k := pair{tool, other}
		if b, ok := best[k]; !ok || better(e, b) {
			best[k] = e
		}
	}
	for p, n := range sum {
		add(p.from, p.to, n, out[p.from]) // p.to is called after p.from
		add(p.to, p.from, n, in[p.to])    // p.from is called before p.to
	}
	t := &Table{with: map[string][]Edge{}, pairs: len(sum)}
	// pairs counts every pair read, listed or not.
	for k, e := range best {
		t.with[k.from] = append(t.with[k.from], e)
	}
	for _, es := range t.with {
		sort.Slice(es, func(i, j int) bool { return better(es[i], es[j]) })
	}
	return t
}

// better orders edges: strong first, then by share, count and id.
func better(a, b Edge) bool {
	if a.Strong != b.Strong {
		return a.Strong
	}
	if a.Share != b.Share {
		return a.Share > b.Share
	}
	if a.N != b.N {
		return a.N > b.N
	}
	return a.Tool < b.Tool
}

// With returns the tools called right before or after id, best first
// (strong first, then by share). The slice must not be modified.
func (t *Table) With(id string) []Edge {
	if t == nil {
		return nil
	}
	return t.with[id]
}

// Pairs returns how many ordered pairs the table holds.
func (t *Table) Pairs() int {
	if t == nil {
		return 0
	}
	return t.pairs
}
