package synonyms

import (
	"slices"
	"testing"
)

func TestLookup(t *testing.T) {
	tests := []struct {
		word string
		want string // one synonym that must be listed
	}{
		{"buy", "purchase"},
		{"purchase", "buy"},
		{"movie", "film"},
	}
	for _, tt := range tests {
		if got := Lookup(tt.word); !slices.Contains(got, tt.want) {
			t.Errorf("Lookup(%q) = %v, want it to contain %q", tt.word, got, tt.want)
		}
	}
	for _, w := range []string{"", "the", "zzzz", "Buy"} {
		if got := Lookup(w); got != nil {
			t.Errorf("Lookup(%q) = %v, want nil", w, got)
		}
	}
}

func TestTableShape(t *testing.T) {
	once.Do(load)
	if n := len(table); n < 1000 || n > 50000 {
		t.Fatalf("table has %d words; regenerate it (go generate)", n)
	}
	if len(tableGz) > 300<<10 {
		t.Errorf("embedded table is %d bytes, above the 300 KiB budget", len(tableGz))
	}
	for w, syns := range table {
		if len(syns) == 0 || len(syns) > 6 || slices.Contains(syns, w) {
			t.Errorf("%q: bad synonyms %v", w, syns)
		}
	}
}
