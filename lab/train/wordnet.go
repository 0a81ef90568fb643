package train

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// DefaultWordNetDir is where Debian's wordnet-base package installs the
// WordNet 3.0 database.
const DefaultWordNetDir = "/usr/share/wordnet"

// synset is one WordNet synonym set.
type synset struct {
	lemmas     []string
	definition string
	hypernyms  []string // synset keys ("n:offset")
}

// loadWordNet reads data.{noun,verb,adj,adv} of a WordNet 3.0 database and
// returns (definition → words) pairs: the query side is the definition,
// the document side the synonyms followed by the synonyms of the direct
// hypernyms. Synsets whose lemmas are all multi-word names are skipped.
func loadWordNet(dir string) ([]Pair, error) {
	sets := map[string]*synset{}
	var order []string
	for _, part := range []struct{ file, pos string }{{"data.noun", "n"}, {"data.verb", "v"}, {"data.adj", "a"}, {"data.adv", "r"}} {
		f, err := os.Open(filepath.Join(dir, part.file))
		if err != nil {
			return nil, fmt.Errorf("wordnet: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "  ") || line == "" {
				continue // licence header
			}
			key, s, ok := parseSynsetLine(line, part.pos)
			if !ok {
				continue
			}
			if _, dup := sets[key]; !dup {
				order = append(order, key)
			}
			sets[key] = s
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("wordnet: %s: %w", part.file, err)
		}
	}
	var out []Pair
	for _, key := range order {
		s := sets[key]
		if s.definition == "" {
			continue
		}
		single := false
		for _, l := range s.lemmas {
			if !strings.Contains(l, " ") && strings.ToLower(l) == l {
				single = true
			}
		}
		if !single {
			continue
		}
		words := append([]string(nil), s.lemmas...)
		for _, h := range s.hypernyms {
			if hs := sets[h]; hs != nil {
				words = append(words, hs.lemmas...)
			}
		}
		out = append(out, Pair{Dataset: "wordnet", Query: s.definition, ToolIDs: []string{"wordnet:" + key + "|" + strings.Join(words, ", ")}})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("wordnet: no synsets read from %s", dir)
	}
	return out, nil
}

// parseSynsetLine parses one line of a WordNet data file:
// offset lex_filenum ss_type w_cnt(hex) (word lex_id)... p_cnt (ptr)... | gloss
func parseSynsetLine(line, pos string) (string, *synset, bool) {
	bar := strings.Index(line, " | ")
	if bar < 0 {
		return "", nil, false
	}
	fields := strings.Fields(line[:bar])
	gloss := strings.TrimSpace(line[bar+3:])
	if len(fields) < 4 {
		return "", nil, false
	}
	key := pos + ":" + fields[0]
	n, err := strconv.ParseInt(fields[3], 16, 32)
	if err != nil || 4+2*int(n) >= len(fields) {
		return "", nil, false
	}
	s := &synset{}
	for i := 0; i < int(n); i++ {
		w := fields[4+2*i]
		if p := strings.IndexByte(w, '('); p > 0 { // adjective marker: word(a)
			w = w[:p]
		}
		s.lemmas = append(s.lemmas, strings.ReplaceAll(w, "_", " "))
	}
	p := 4 + 2*int(n)
	pc, err := strconv.Atoi(fields[p])
	if err != nil {
		return "", nil, false
	}
	for i := 0; i < pc && p+4+4*i < len(fields); i++ {
		sym, off, ps := fields[p+1+4*i], fields[p+2+4*i], fields[p+3+4*i]
		if sym == "@" || sym == "@i" {
			if ps == "s" {
				ps = "a"
			}
			s.hypernyms = append(s.hypernyms, ps+":"+off)
		}
	}
	// The definition is the gloss up to the first quoted example.
	def := gloss
	if q := strings.Index(def, `"`); q >= 0 {
		def = def[:q]
	}
	s.definition = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(def), ";"))
	return key, s, true
}
