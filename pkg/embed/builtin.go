package embed

import (
	"fmt"
	"math"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// BuiltinDim is the dimension of the builtin embedder's vectors.
const BuiltinDim = 1024

// builtinVersion changes whenever the features or weights change, so that an
// index built by an older version is detected (through ModelID) and rebuilt.
const builtinVersion = "v1"

// Feature weights of the builtin embedder (before L2 normalisation), chosen
// on the public training sets in ../shared/train (see quality_test.go).
const (
	weightWord   = 1.0  // the stemmed word
	weightBigram = 0.3  // two consecutive content words
	weightChars  = 1.2  // norm of the block of character n-grams of one word
	weightCJK    = 1.2  // norm of the block of CJK character uni- and bigrams
	weightWeak   = 0.35 // multiplier for words common to nearly every tool
)

// Seeds keep the feature kinds apart in the hash space.
const (
	seedWord   = 0x9e3779b97f4a7c15
	seedBigram = 0xc2b2ae3d27d4eb4f
	seedChars  = 0x165667b19e3779f9
)

// NewHashing returns the offline hashing embedder: deterministic signed
// feature hashing of stemmed words, word bigrams and character 3–5-grams
// into BuiltinDim dimensions, with sublinear term frequency and L2
// normalisation. It needs no model files and no network, and it is safe for
// concurrent use.
func NewHashing() Embedder {
	b := &builtin{cache: make(map[string][]feature, 4096)}
	b.inProcess = b.embed
	return b
}

type builtin struct {
	inProcess
	mu    sync.RWMutex
	cache map[string][]feature // stem → its word and n-gram features
}

type feature struct {
	idx uint16
	val float32
}

const builtinCacheMax = 1 << 17

func (b *builtin) Dim() int { return BuiltinDim }

func (b *builtin) ModelID() string {
	return fmt.Sprintf("builtin-hash-%s-%d", builtinVersion, BuiltinDim)
}

// embed computes one vector. Empty text (no words) gives the zero vector.
func (b *builtin) embed(text string) []float32 {
	vec := make([]float32, BuiltinDim)
	words := catalog.SplitName(text)
	if len(words) == 0 {
		return vec
	}

	// Content words in order (stop words removed, stems), with counts.
	// Features are summed in first-occurrence order, never in map order,
	// so that the same text always gives the same bits (the trainer's
	// byte-reproducible output depends on it).
	stems := make([]string, 0, len(words))
	distinct := make([]string, 0, len(words))
	tf := make(map[string]int, len(words))
	for _, w := range words {
		if stopWords[w] {
			continue
		}
		s := stem(w)
		stems = append(stems, s)
		if tf[s] == 0 {
			distinct = append(distinct, s)
		}
		tf[s]++
	}
	for _, s := range distinct {
		n := tf[s]
		wt := float32(1 + math.Log(float64(n)))
		if weakWords[s] {
			wt *= weightWeak
		}
		for _, f := range b.wordFeatures(s) {
			vec[f.idx] += wt * f.val
		}
	}

	// Bigrams of consecutive content words, also with sublinear tf.
	if len(stems) > 1 {
		bi := make(map[uint64]int, len(stems))
		order := make([]uint64, 0, len(stems))
		for i := 1; i < len(stems); i++ {
			if stems[i-1] == stems[i] {
				continue
			}
			h := hashString(hashString(seedBigram, stems[i-1]), " ")
			h = hashString(h, stems[i])
			if bi[h] == 0 {
				order = append(order, h)
			}
			bi[h]++
		}
		for _, h := range order {
			n := bi[h]
			idx, sign := slot(h)
			vec[idx] += sign * weightBigram * float32(1+math.Log(float64(n)))
		}
	}
	vindex.Normalize(vec)
	return vec
}

// wordFeatures returns the hashed features of one stem: the stem itself and
// its character n-grams (or CJK character uni/bigrams), cached.
func (b *builtin) wordFeatures(s string) []feature {
	b.mu.RLock()
	fs, ok := b.cache[s]
	b.mu.RUnlock()
	if ok {
		return fs
	}
	fs = computeWordFeatures(s)
	b.mu.Lock()
	if len(b.cache) < builtinCacheMax {
		b.cache[s] = fs
	}
	b.mu.Unlock()
	return fs
}

func computeWordFeatures(s string) []feature {
	acc := make(map[uint16]float32, 16)
	idx, sign := slot(hashString(seedWord, s))
	acc[idx] += sign * weightWord

	var grams []uint64
	norm := float32(weightChars)
	if hasCJK(s) {
		// CJK text has no spaces: a "word" is a whole run of characters.
		// Single characters and character pairs carry its meaning.
		norm = weightCJK
		rs := []rune(s)
		for i := range rs {
			grams = append(grams, hashString(seedChars, string(rs[i:i+1])))
			if i+1 < len(rs) {
				grams = append(grams, hashString(seedChars, string(rs[i:i+2])))
			}
		}
	} else if utf8.RuneCountInString(s) >= 2 {
		marked := "<" + s + ">"
		starts := make([]int, 0, len(marked)+1)
		for i := range marked {
			starts = append(starts, i)
		}
		starts = append(starts, len(marked))
		runes := len(starts) - 1
		for n := 3; n <= 5; n++ {
			for i := 0; i+n <= runes; i++ {
				grams = append(grams, hashString(seedChars, marked[starts[i]:starts[i+n]]))
			}
		}
	}
	if len(grams) > 0 {
		w := norm / float32(math.Sqrt(float64(len(grams))))
		for _, h := range grams {
			idx, sign := slot(h)
			acc[idx] += sign * w
		}
	}
	fs := make([]feature, 0, len(acc))
	for idx, v := range acc {
		if v != 0 {
			fs = append(fs, feature{idx, v})
		}
	}
	// Any order: each slot appears once, so the caller's sum into the
	// vector does not depend on it.
	return fs
}

func hasCJK(s string) bool {
	for _, r := range s {
		if unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) {
			return true
		}
	}
	return false
}

// hashString is FNV-1a (64 bit) continued from h.
func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 0x100000001b3
	}
	return h
}

// slot maps a hash to a dimension and a sign (signed feature hashing keeps
// collisions unbiased).
func slot(h uint64) (uint16, float32) {
	h ^= h >> 29
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 32
	sign := float32(1)
	if h>>63 == 1 {
		sign = -1
	}
	return uint16(h % BuiltinDim), sign
}

// stem is a light suffix stripper: plurals, -ing, -ed and a final -e, so
// that "forecasts"/"forecast", "queries"/"query" and "create"/"creating"/
// "created" meet. Character n-grams cover what it misses.
func stem(w string) string {
	n := len(w)
	if n <= 3 || !isASCIILower(w) {
		return w
	}
	switch {
	case hasSuffix(w, "ies") && n > 4:
		w = w[:n-3] + "y"
	case hasSuffix(w, "sses"):
		w = w[:n-2]
	case hasSuffix(w, "ss"), hasSuffix(w, "us"), hasSuffix(w, "is"):
	case hasSuffix(w, "xes"), hasSuffix(w, "ches"), hasSuffix(w, "shes"), hasSuffix(w, "zes"):
		w = w[:n-2]
	case hasSuffix(w, "s"):
		w = w[:n-1]
	case hasSuffix(w, "ing") && n > 5:
		w = undouble(w[:n-3])
	case hasSuffix(w, "ed") && n > 4:
		w = undouble(w[:n-2])
	}
	if len(w) > 4 && w[len(w)-1] == 'e' {
		w = w[:len(w)-1]
	}
	return w
}

func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && !isVowel(w[n-1]) && w[n-1] != 'l' && w[n-1] != 's' && w[n-1] != 'z' {
		return w[:n-1]
	}
	return w
}

func isVowel(c byte) bool { return c == 'a' || c == 'e' || c == 'i' || c == 'o' || c == 'u' }

func hasSuffix(s, suf string) bool { return len(s) >= len(suf) && s[len(s)-len(suf):] == suf }

func isASCIILower(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 'a' || c > 'z' {
			return false
		}
	}
	return true
}

// stopWords carry no meaning for tool retrieval.
var stopWords = wordSet(`a an the and or but if then else of to in on at by for from with without
into onto over under about as is are was were be been being am do does did doing done have has had
having it its it's this that these those there here which who whom whose what when where why how
i me my we our you your he she they them their his her not no nor so than too very can could should
would may might must shall will just also any all some each every other such only own same both
few more most s t e g eg ie etc via per`)

// weakWords appear in a large share of tool documents; they still count,
// with a lower weight.
var weakWords = func() map[string]bool {
	m := map[string]bool{}
	for w := range wordSet(`tool tools use used using return returns returned result results
		given provide provides specified specify string type object value values optional required
		default parameter parameters param params input output name id description number integer
		boolean array list`) {
		m[stem(w)] = true
	}
	return m
}()

func wordSet(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range catalog.SplitName(s) {
		m[w] = true
	}
	return m
}
