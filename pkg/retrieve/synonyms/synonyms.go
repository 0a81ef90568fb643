// Package synonyms is a compact English synonym table for query expansion
// in keyword retrieval. It was derived offline from WordNet 3.0 (Princeton
// University; licence in docs/retrieval.md), restricted to the most
// frequent senses of each word and to the vocabulary of the public tool
// catalogs in ../shared/train. Regenerate with go generate (needs the
// Debian package wordnet-base).
package synonyms

//go:generate go run ../../../lab/gen/synonyms -wordnet /usr/share/wordnet -train ../../../../shared/train -out table.txt.gz

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"strings"
	"sync"
)

//go:embed table.txt.gz
var tableGz []byte

var (
	once  sync.Once
	table map[string][]string
)

func load() {
	table = map[string][]string{}
	zr, err := gzip.NewReader(bytes.NewReader(tableGz))
	if err != nil {
		return // an unreadable table means no expansion, never a failure
	}
	sc := bufio.NewScanner(zr)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		f := strings.Fields(line)
		if len(f) > 1 {
			table[f[0]] = f[1:]
		}
	}
}

// Lookup returns the synonyms of a lower-case word, most frequent sense
// first, or nil. The slice must not be modified.
func Lookup(word string) []string {
	once.Do(load)
	return table[word]
}
