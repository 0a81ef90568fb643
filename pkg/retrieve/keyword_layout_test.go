package retrieve

import (
	"slices"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// The flat layout keeps its dictionary in step with the tools: a term
// whose last tool is removed leaves it (its id is reused), every posting
// points at the entry of its own term, and an index synced through changes
// holds the same terms as one built from scratch.
func TestKeywordLayoutFollowsTools(t *testing.T) {
	mk := func(name, desc string) catalog.Tool {
		tl := catalog.Tool{Server: "s", Name: name, Description: desc}
		catalog.Finalize(&tl)
		return tl
	}
	srv := []catalog.Server{{ID: "s", Title: "Storage"}}
	a, b, c := mk("alpha", "zebra giraffe"), mk("beta", "zebra okapi"), mk("gamma", "quokka")
	check := func(ix *KeywordIndex, tools []catalog.Tool) {
		t.Helper()
		fresh := NewKeywordIndex(FieldWeights{})
		fresh.Sync(tools, srv)
		var got, want []string
		for term := range ix.termIDs {
			got = append(got, term)
		}
		for term := range fresh.termIDs {
			want = append(want, term)
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("dictionary %v, want %v", got, want)
		}
		live := 0
		for id, p := range ix.post {
			if ix.termStr[id] == "" {
				if len(p) != 0 {
					t.Fatalf("free term id %d has %d postings", id, len(p))
				}
				continue
			}
			live++
			if ix.termIDs[ix.termStr[id]] != uint32(id) {
				t.Fatalf("term %q: id %d, dictionary says %d", ix.termStr[id], id, ix.termIDs[ix.termStr[id]])
			}
			for _, e := range p {
				d := ix.slots[e.slot]
				if d == nil || d.removed || d.ents[e.ent].term != uint32(id) {
					t.Fatalf("posting of %q points at the wrong entry", ix.termStr[id])
				}
			}
			if len(p) != len(fresh.postings(ix.termStr[id])) {
				t.Fatalf("term %q: %d postings, fresh index %d", ix.termStr[id], len(p), len(fresh.postings(ix.termStr[id])))
			}
		}
		if live != len(ix.termIDs) || len(ix.termStr)-len(ix.freeTerm) != live {
			t.Fatalf("%d live term ids, %d in the dictionary, %d ids of which %d free", live, len(ix.termIDs), len(ix.termStr), len(ix.freeTerm))
		}
		for _, d := range ix.byID {
			if !slices.IsSortedFunc(d.ents, func(x, y kent) int { return int(x.term) - int(y.term) }) {
				t.Fatalf("%s: entries not sorted by term id", d.tool.ID)
			}
			for term, tf := range d.termFreqs() {
				if d.tf(term) != tf {
					t.Fatalf("%s: tf(%q) is not its entry", d.tool.ID, term)
				}
			}
		}
	}
	ix := NewKeywordIndex(FieldWeights{})
	ix.Sync([]catalog.Tool{a, b, c}, srv)
	check(ix, []catalog.Tool{a, b, c})
	ix.Sync([]catalog.Tool{a, b}, srv) // quokka and gamma leave
	check(ix, []catalog.Tool{a, b})
	if _, ok := ix.termIDs["quokka"]; ok {
		t.Fatal("a removed tool's only term stays in the dictionary")
	}
	free := len(ix.freeTerm)
	d := mk("delta", "wombat")
	ix.Sync([]catalog.Tool{a, b, d}, srv)
	check(ix, []catalog.Tool{a, b, d})
	if len(ix.freeTerm) >= free {
		t.Fatalf("free term ids %d → %d: not reused", free, len(ix.freeTerm))
	}
	b2 := mk("beta", "zebra tapir")
	ix.Sync([]catalog.Tool{a, b2, d, a}, srv) // b changed; a listed twice
	check(ix, []catalog.Tool{a, b2, d})
	if tf := ix.byID[a.ID].tf("zebra"); tf == nil || tf[FieldDescription] != 1 {
		t.Fatalf("alpha's tf of zebra: %v", tf)
	}
	if ix.byID[b2.ID].tf("okapi") != nil {
		t.Fatal("beta still holds a term of its old description")
	}
}
