package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/toolrag/mcp-gateway/lab/wordnet"
)

// posFiles are the WordNet parts of speech read: index.<pos>, data.<pos>
// and <pos>.exc.
var posFiles = []string{"noun", "verb", "adj", "adv"}

// WordNet is the part of a WordNet 3.0 database the generator needs.
type WordNet struct {
	// senses: pos → lemma → synset offsets, most frequent sense first
	// (the order of index.<pos>), cut to the senses with tagged counts.
	senses map[string]map[string][]senseRef
	// synsets: pos → offset → single-word lemmas of the synset.
	synsets map[string]map[int64][]string
	// exc: pos → inflected form → base forms (<pos>.exc).
	exc map[string]map[string][]string
}

type senseRef struct {
	offset int64
	tagged bool // among the senses with a tagged-corpus count
}

// LoadWordNet reads the index, data and exception files under dir
// (/usr/share/wordnet on Debian).
func LoadWordNet(dir string) (*WordNet, error) {
	wn := &WordNet{senses: map[string]map[string][]senseRef{}, synsets: map[string]map[int64][]string{}, exc: map[string]map[string][]string{}}
	for _, pos := range posFiles {
		idx, err := readIndex(filepath.Join(dir, "index."+pos))
		if err != nil {
			return nil, err
		}
		wn.senses[pos] = idx
		data, err := readData(filepath.Join(dir, "data."+pos))
		if err != nil {
			return nil, err
		}
		wn.synsets[pos] = data
		exc, err := readExc(filepath.Join(dir, pos+".exc"))
		if err != nil {
			return nil, err
		}
		wn.exc[pos] = exc
	}
	return wn, nil
}

// readIndex parses index.<pos>:
// lemma pos synset_cnt p_cnt [ptr_symbol...] sense_cnt tagsense_cnt synset_offset...
func readIndex(path string) (map[string][]senseRef, error) {
	out := map[string][]senseRef{}
	err := wordnet.EachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) < 6 {
			return fmt.Errorf("short index line")
		}
		pcnt, err := strconv.Atoi(f[3])
		if err != nil || 4+pcnt+2 > len(f) {
			return fmt.Errorf("bad pointer count %q", f[3])
		}
		tagged, err := strconv.Atoi(f[4+pcnt+1])
		if err != nil {
			return fmt.Errorf("bad tagsense_cnt: %w", err)
		}
		var refs []senseRef
		for i, s := range f[4+pcnt+2:] {
			off, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return fmt.Errorf("bad synset offset %q", s)
			}
			refs = append(refs, senseRef{offset: off, tagged: i < tagged})
		}
		out[f[0]] = refs
		return nil
	})
	return out, err
}

// readData reads data.<pos>, keeping each synset's single-word lemmas
// (lower case, adjective markers such as "(a)" removed).
func readData(path string) (map[int64][]string, error) {
	out := map[int64][]string{}
	err := wordnet.EachLine(path, func(line string) error {
		s, err := wordnet.ParseData(line)
		if err != nil {
			return err
		}
		off, err := strconv.ParseInt(s.Offset, 10, 64)
		if err != nil {
			return fmt.Errorf("bad offset %q", s.Offset)
		}
		var words []string
		for _, w := range s.Words {
			if w = strings.ToLower(w); isWord(w) {
				words = append(words, w)
			}
		}
		out[off] = words
		return nil
	})
	return out, err
}

// readExc parses <pos>.exc: inflected base [base...].
func readExc(path string) (map[string][]string, error) {
	out := map[string][]string{}
	err := wordnet.EachLine(path, func(line string) error {
		f := strings.Fields(line)
		if len(f) >= 2 {
			out[f[0]] = append(out[f[0]], f[1:]...)
		}
		return nil
	})
	return out, err
}

// isWord is true for lower-case ASCII letter runs of 3 or more (no
// multi-word lemmas, no hyphens or digits).
func isWord(w string) bool {
	if len(w) < 3 {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// Detachment rules of WordNet's morphy.
var morphRules = map[string][][2]string{
	"noun": {{"s", ""}, {"ses", "s"}, {"xes", "x"}, {"zes", "z"}, {"ches", "ch"}, {"shes", "sh"}, {"men", "man"}, {"ies", "y"}},
	"verb": {{"s", ""}, {"ies", "y"}, {"es", "e"}, {"es", ""}, {"ed", "e"}, {"ed", ""}, {"ing", "e"}, {"ing", ""}},
	"adj":  {{"er", ""}, {"est", ""}, {"er", "e"}, {"est", "e"}},
	"adv":  nil,
}

// Lemmas returns the base forms of w in pos that WordNet knows (morphy:
// w itself, exceptions, then detachment rules).
func (wn *WordNet) Lemmas(w, pos string) []string {
	var out []string
	add := func(l string) {
		if _, ok := wn.senses[pos][l]; ok {
			for _, x := range out {
				if x == l {
					return
				}
			}
			out = append(out, l)
		}
	}
	add(w)
	for _, b := range wn.exc[pos][w] {
		add(b)
	}
	for _, r := range morphRules[pos] {
		if strings.HasSuffix(w, r[0]) && len(w) > len(r[0]) {
			add(w[:len(w)-len(r[0])] + r[1])
		}
	}
	return out
}

// Options shape the table.
type Options struct {
	Senses      int // senses read per lemma and part of speech (most frequent first)
	MaxSynonyms int // synonyms kept per word
}

// Synonyms returns the single-word synonyms of w over its most frequent
// senses (tagged senses only, at most opts.Senses per part of speech),
// those accepted by keep, in order of first appearance.
func (wn *WordNet) Synonyms(w string, opts Options, keep func(string) bool) []string {
	var out []string
	seen := map[string]bool{w: true}
	for _, pos := range posFiles {
		for _, lemma := range wn.Lemmas(w, pos) {
			seen[lemma] = true
			for i, ref := range wn.senses[pos][lemma] {
				if i >= opts.Senses || !ref.tagged {
					break
				}
				for _, s := range wn.synsets[pos][ref.offset] {
					if !seen[s] && keep(s) {
						seen[s] = true
						out = append(out, s)
					}
				}
			}
		}
	}
	if len(out) > opts.MaxSynonyms {
		out = out[:opts.MaxSynonyms]
	}
	return out
}

// Table maps each key word to its synonyms; keys are sorted.
type Table struct {
	Keys []string
	Syns map[string][]string
}

// Build makes the table for the key words, keeping synonyms in values.
func (wn *WordNet) Build(keys []string, values map[string]bool, stop map[string]bool, opts Options) Table {
	t := Table{Syns: map[string][]string{}}
	for _, k := range keys {
		if stop[k] || !isWord(k) {
			continue
		}
		s := wn.Synonyms(k, opts, func(s string) bool { return values[s] && !stop[s] })
		if len(s) > 0 {
			t.Keys = append(t.Keys, k)
			t.Syns[k] = s
		}
	}
	sort.Strings(t.Keys)
	return t
}
