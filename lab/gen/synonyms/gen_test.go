package main

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestSynonyms(t *testing.T) {
	wn, err := LoadWordNet(filepath.Join("testdata", "wordnet"))
	if err != nil {
		t.Fatal(err)
	}
	all := func(string) bool { return true }
	tests := []struct {
		word   string
		senses int
		keep   func(string) bool
		want   []string
	}{
		{"buy", 1, all, []string{"purchase"}},                           // multi-word take_in dropped
		{"buy", 2, all, []string{"purchase"}},                           // second sense untagged: not read
		{"bought", 1, all, []string{"purchase"}},                        // exception list
		{"buys", 1, all, []string{"purchase"}},                          // detachment rule
		{"purchase", 1, all, []string{"buy"}},                           // symmetric
		{"fetch", 1, all, nil},                                          // no tagged sense
		{"files", 1, all, []string{"register"}},                         // noun rule
		{"buy", 1, func(s string) bool { return s != "purchase" }, nil}, // vocabulary filter
		{"unknown", 1, all, nil},
	}
	for _, tt := range tests {
		got := wn.Synonyms(tt.word, Options{Senses: tt.senses, MaxSynonyms: 5}, tt.keep)
		if !slices.Equal(got, tt.want) {
			t.Errorf("Synonyms(%q, senses %d) = %v, want %v", tt.word, tt.senses, got, tt.want)
		}
	}
}

func TestBuildAndWrite(t *testing.T) {
	wn, err := LoadWordNet(filepath.Join("testdata", "wordnet"))
	if err != nil {
		t.Fatal(err)
	}
	values := map[string]bool{"purchase": true, "buy": true, "register": true}
	tab := wn.Build([]string{"file", "buy", "the", "purchase"}, values, map[string]bool{"the": true}, Options{Senses: 2, MaxSynonyms: 5})
	if want := []string{"buy", "file", "purchase"}; !slices.Equal(tab.Keys, want) {
		t.Fatalf("keys %v, want %v", tab.Keys, want)
	}
	var buf bytes.Buffer
	if err := Write(&buf, tab); err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(zr)
	text := string(b)
	for _, line := range []string{"buy purchase\n", "file register\n", "purchase buy\n", "# Synonyms derived from WordNet 3.0"} {
		if !strings.Contains(text, line) {
			t.Errorf("table lacks %q:\n%s", line, text)
		}
	}
}

func TestLoadWordNetMissing(t *testing.T) {
	if _, err := LoadWordNet(t.TempDir()); err == nil || !os.IsNotExist(errUnwrapAll(err)) {
		t.Fatalf("want a not-exist error, got %v", err)
	}
}

func errUnwrapAll(err error) error {
	for {
		u, ok := err.(interface{ Unwrap() error })
		if !ok {
			return err
		}
		err = u.Unwrap()
	}
}
