package train

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/toolrag/mcp-gateway/lab/wordnet"
)

// DefaultWordNetDir is where Debian's wordnet-base package installs the
// WordNet 3.0 database.
const DefaultWordNetDir = wordnet.DefaultDir

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
		err := wordnet.EachLine(filepath.Join(dir, part.file), func(line string) error {
			ws, err := wordnet.ParseData(line)
			if err != nil {
				return nil // a line the trainer cannot use (an empty one too)
			}
			key := part.pos + ":" + ws.Offset
			if _, dup := sets[key]; !dup {
				order = append(order, key)
			}
			sets[key] = newSynset(ws)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("wordnet: %w", err)
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

// newSynset keeps what the trainer uses of a synset: its lemmas as words,
// its definition (the gloss up to the first quoted example) and its direct
// hypernyms.
func newSynset(ws wordnet.Synset) *synset {
	s := &synset{}
	for _, w := range ws.Words {
		s.lemmas = append(s.lemmas, strings.ReplaceAll(w, "_", " "))
	}
	for _, p := range ws.Pointers {
		if p.Symbol == "@" || p.Symbol == "@i" {
			pos := p.POS
			if pos == "s" {
				pos = "a"
			}
			s.hypernyms = append(s.hypernyms, pos+":"+p.Offset)
		}
	}
	def := ws.Gloss
	if q := strings.Index(def, `"`); q >= 0 {
		def = def[:q]
	}
	s.definition = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(def), ";"))
	return s
}
