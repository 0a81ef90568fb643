// Package wordnet reads the data files of a WordNet 3.0 database, as
// Debian's wordnet-base package installs it: the synsets of data.<pos> and
// the lines of index.<pos> and <pos>.exc. The trainer reads definitions
// and hypernyms from it, the synonym generator lemmas and senses.
package wordnet

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
)

// DefaultDir is where Debian's wordnet-base package installs the database.
const DefaultDir = "/usr/share/wordnet"

// Synset is one line of a data.<pos> file.
type Synset struct {
	// Offset is the synset's byte offset as written (eight digits), which
	// index.<pos> lines and pointers use to name it.
	Offset string
	// Words are the synset's lemmas as written ("domestic_dog"), with an
	// adjective's syntactic marker such as "(a)" removed.
	Words    []string
	Pointers []Pointer
	// Gloss is the text after " | ": the definition, then any quoted
	// examples.
	Gloss string
}

// Pointer is one relation of a synset to another.
type Pointer struct {
	Symbol string // "@" hypernym, "@i" instance hypernym, …
	Offset string
	POS    string // n, v, a, s (adjective satellite) or r
}

// ParseData parses one line of a data.<pos> file:
//
//	offset lex_filenum ss_type w_cnt(hex) (word lex_id)... p_cnt (symbol offset pos source/target)... [frames] | gloss
func ParseData(line string) (Synset, error) {
	head, gloss, ok := strings.Cut(line, " | ")
	if !ok {
		return Synset{}, fmt.Errorf("no gloss (\" | \")")
	}
	f := strings.Fields(head)
	if len(f) < 4 {
		return Synset{}, fmt.Errorf("short data line")
	}
	n, err := strconv.ParseInt(f[3], 16, 32)
	if err != nil || 4+2*int(n) >= len(f) {
		return Synset{}, fmt.Errorf("bad word count %q", f[3])
	}
	s := Synset{Offset: f[0], Gloss: strings.TrimSpace(gloss)}
	for i := range int(n) {
		w := f[4+2*i]
		if j := strings.IndexByte(w, '('); j > 0 {
			w = w[:j]
		}
		s.Words = append(s.Words, w)
	}
	p := 4 + 2*int(n)
	pc, err := strconv.Atoi(f[p])
	if err != nil {
		return Synset{}, fmt.Errorf("bad pointer count %q", f[p])
	}
	for i := 0; i < pc && p+4+4*i < len(f); i++ {
		s.Pointers = append(s.Pointers, Pointer{Symbol: f[p+1+4*i], Offset: f[p+2+4*i], POS: f[p+3+4*i]})
	}
	return s, nil
}

// EachLine calls fn with each line of the file at path (without its line
// ending), passing over the licence header at the top of the data and
// index files (lines that start with two spaces). An error of fn stops the
// reading and comes back naming the file and line.
func EachLine(path string, fn func(line string) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<16)
	n := 0
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			n++
			if !strings.HasPrefix(line, "  ") {
				if e := fn(strings.TrimRight(line, "\r\n")); e != nil {
					return fmt.Errorf("%s line %d: %w", path, n, e)
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
}
