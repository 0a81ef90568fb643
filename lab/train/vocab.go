package train

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// pruneVocab keeps the WordPiece tokens the training text actually uses:
// tokens used at least minCount times, and single characters (plain or
// "##"-continuation) used at least once, so that words made of known
// characters still tokenize. Dropping a whole-word token makes that word
// fall back to smaller pieces, so the text is re-tokenized until the set is
// stable. The result starts with [PAD] and [UNK], then tokens by falling
// count (ties by string): stable for the same input.
func pruneVocab(base *model2vec.Tokenizer, texts []string, minCount int) ([]string, error) {
	unk := base.Token(base.UnkID())
	if unk == "" {
		return nil, fmt.Errorf("base tokenizer has no unknown token")
	}
	keep := baseTokens(base)
	var counts map[string]int
	for iter := 0; iter < 10; iter++ {
		_, tok, err := wordPiece(keep, unk)
		if err != nil {
			return nil, err
		}
		counts = map[string]int{}
		for _, t := range texts {
			for _, id := range tok.Encode(t) {
				counts[tok.Token(id)]++
			}
		}
		next := make([]string, 0, len(counts))
		for s, n := range counts {
			if s == unk {
				continue
			}
			if n >= minCount || (n >= 1 && isSingleChar(s)) {
				next = append(next, s)
			}
		}
		// Characters not seen stay available as fall-back pieces only if
		// they were used; everything else unused goes.
		changed := len(next) != len(keep)-1
		sort.Strings(next)
		keep = append(next, unk)
		if !changed && iter > 0 {
			break
		}
	}
	sort.Slice(keep, func(i, j int) bool {
		ci, cj := counts[keep[i]], counts[keep[j]]
		if ci != cj {
			return ci > cj
		}
		return keep[i] < keep[j]
	})
	out := []string{"[PAD]", unk}
	for _, s := range keep {
		if s != unk && s != "[PAD]" {
			out = append(out, s)
		}
	}
	return out, nil
}

func isSingleChar(s string) bool {
	if len(s) > 2 && s[:2] == "##" {
		s = s[2:]
	}
	return utf8.RuneCountInString(s) == 1
}

// addWords returns the base tokenizer's vocabulary plus the words of the
// training text that it splits into several pieces and that occur at
// least minCount times, so that such words ("delete", "upload",
// "workflow": several pieces in BERT's vocabulary) get a vector of their
// own instead of sharing their pieces' with unrelated words. Words are
// lower-case runs of letters and digits with at least three letters,
// as BERT's basic tokenizer cuts them; the result is sorted by the
// base order, then the added words by falling count (ties by string).
func addWords(base *model2vec.Tokenizer, texts []string, minCount int) (vocab []string, added int) {
	counts := map[string]int{}
	for _, t := range texts {
		for _, w := range wordRE.FindAllString(strings.ToLower(t), -1) {
			counts[w]++
		}
	}
	var words []string
	for w, n := range counts {
		if n < minCount || letters(w) < 3 || len(base.Encode(w)) < 2 {
			continue
		}
		words = append(words, w)
	}
	sort.Slice(words, func(i, j int) bool {
		if counts[words[i]] != counts[words[j]] {
			return counts[words[i]] > counts[words[j]]
		}
		return words[i] < words[j]
	})
	return append(baseTokens(base), words...), len(words)
}

// baseTokens returns the tokenizer's vocabulary in id order.
func baseTokens(base *model2vec.Tokenizer) []string {
	out := make([]string, 0, base.VocabSize())
	for id := 0; id < base.VocabSize(); id++ {
		if tok := base.Token(id); tok != "" {
			out = append(out, tok)
		}
	}
	return out
}

// wordPiece builds a WordPiece tokenizer of vocab: its tokenizer.json
// and the parsed tokenizer.
func wordPiece(vocab []string, unk string) ([]byte, *model2vec.Tokenizer, error) {
	j, err := model2vec.WordPieceJSON(vocab, unk)
	if err != nil {
		return nil, nil, err
	}
	tok, err := model2vec.ParseTokenizer(j)
	if err != nil {
		return nil, nil, err
	}
	return j, tok, nil
}

var wordRE = regexp.MustCompile(`[\p{L}\p{N}]+`)

func letters(w string) int {
	n := 0
	for _, r := range w {
		if unicode.IsLetter(r) {
			n++
		}
	}
	return n
}
