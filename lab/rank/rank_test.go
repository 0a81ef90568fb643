package rank

import (
	"math"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func set[ID comparable](ids ...ID) map[ID]bool {
	m := map[ID]bool{}
	for _, id := range ids {
		m[id] = true
	}
	return m
}

func TestFigures(t *testing.T) {
	ranked := []string{"a", "x", "b", "y", "z", "c"}
	rel := set("a", "b", "c", "d")
	tests := []struct {
		name string
		got  float64
		want float64
	}{
		{"recall@1", RecallAt(ranked, rel, 1), 0.25},
		{"recall@5", RecallAt(ranked, rel, 5), 0.5},
		{"recall@10", RecallAt(ranked, rel, 10), 0.75},
		{"recall empty relevant", RecallAt(ranked, set[string](), 5), 0},
		{"group recall@5", GroupRecallAt(ranked, [][]string{{"q", "b"}, {"c"}, {"a"}}, 5), 2.0 / 3},
		{"group recall none", GroupRecallAt(ranked, nil, 5), 0},
		{"mrr first", ReciprocalRank(ranked, set("a")), 1},
		{"mrr third", ReciprocalRank(ranked, set("b")), 1.0 / 3},
		{"mrr none", ReciprocalRank(ranked, set("q")), 0},
		{"ndcg perfect", NDCGAt([]string{"a", "b"}, set("a", "b"), 10), 1},
		{"ndcg", NDCGAt([]string{"x", "a"}, set("a"), 10), 1 / math.Log2(3)},
		{"ndcg cut", NDCGAt([]string{"x", "a"}, set("a"), 1), 0},
		{"ndcg of int ids", NDCGAt([]int{7, 3}, set(3), 10), 1 / math.Log2(3)},
	}
	for _, tt := range tests {
		if !near(tt.got, tt.want) {
			t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestSum(t *testing.T) {
	var s Sum[string]
	s.Add([]string{"a"}, []string{"a"}, nil)
	s.Add([]string{"x"}, []string{"a"}, [][]string{{"a"}})
	m := s.Result()
	if m.Queries != 2 || !near(m.RecallAt1, 0.5) || !near(m.HitAt5, 0.5) || !near(m.MRR, 0.5) || m.GroupQueries != 1 || m.GroupRecall5 != 0 {
		t.Errorf("summed = %+v", m)
	}
	var ids Sum[int]
	ids.Add([]int{4, 2, 9}, []int{2, 2, 5}, nil) // a repeated id counts once
	if m := ids.Result(); m.Queries != 1 || !near(m.RecallAt1, 0) || !near(m.RecallAt5, 0.5) || !near(m.MRR, 0.5) {
		t.Errorf("summed int ids = %+v", m)
	}
	var empty Sum[int]
	if m := empty.Result(); m != (Metrics{}) {
		t.Errorf("no queries: %+v, want zero figures", m)
	}
}

// TestMacro: the macro average weighs every set the same, and averages the
// group recalls only over the sets that have groups.
func TestMacro(t *testing.T) {
	got := Macro(map[string]Metrics{
		"a": {Queries: 10, RecallAt1: 1, RecallAt5: 1, RecallAt10: 1, NDCG10: 1, MRR: 1, HitAt5: 1, GroupQueries: 2, GroupRecall5: 0.5, GroupRecall10: 1},
		"b": {Queries: 30, RecallAt1: 0, RecallAt5: 0.5, RecallAt10: 0.5, NDCG10: 0, MRR: 0, HitAt5: 0},
	})
	want := Metrics{Queries: 40, RecallAt1: 0.5, RecallAt5: 0.75, RecallAt10: 0.75, NDCG10: 0.5, MRR: 0.5, HitAt5: 0.5, GroupQueries: 2, GroupRecall5: 0.5, GroupRecall10: 1}
	if got != want {
		t.Errorf("Macro = %+v\nwant    %+v", got, want)
	}
}
