package retrieve

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Terms splits text into index terms: identifiers are split at camelCase,
// snake_case, kebab-case and dot boundaries, words are lower-cased, English
// stop words are dropped and the rest are Porter-stemmed. Runs of Chinese,
// Japanese or Korean characters, which have no spaces, become overlapping
// character bigrams. Queries and documents go through the same function.
func Terms(text string) []string {
	return stemCache(nil).terms(text)
}

// stemCache memoises stem for one goroutine: a catalog repeats the same
// few thousand words over and over, so indexing many documents stems each
// distinct word once. The nil cache stems every word (queries).
type stemCache map[string]string

func (c stemCache) stem(w string) string {
	if c == nil {
		return stem(w)
	}
	s, ok := c[w]
	if !ok {
		s = stem(w)
		c[w] = s
	}
	return s
}

// terms is Terms with the cache.
func (c stemCache) terms(text string) []string {
	var out []string
	for _, w := range catalog.SplitName(text) {
		if hasCJK(w) {
			out = c.appendCJK(out, w)
			continue
		}
		if stopWords[w] || len(w) < 2 && !isDigits(w) {
			continue
		}
		out = append(out, c.stem(w))
	}
	return out
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

func isCJK(r rune) bool {
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)
}

func hasCJK(w string) bool {
	if utf8.RuneCountInString(w) == len(w) {
		return false // ASCII only
	}
	for _, r := range w {
		if isCJK(r) {
			return true
		}
	}
	return false
}

// appendCJK splits w into its CJK runs (emitted as character bigrams, or the
// single character of a one-character run) and its other runs (emitted as
// ordinary words).
func (c stemCache) appendCJK(out []string, w string) []string {
	rs := []rune(w)
	for i := 0; i < len(rs); {
		j := i
		cjk := isCJK(rs[i])
		for j < len(rs) && isCJK(rs[j]) == cjk {
			j++
		}
		run := rs[i:j]
		switch {
		case !cjk:
			if s := string(run); !stopWords[s] && len(s) >= 2 {
				out = append(out, c.stem(s))
			}
		case len(run) == 1:
			out = append(out, string(run))
		default:
			for k := 0; k+1 < len(run); k++ {
				out = append(out, string(run[k:k+2]))
			}
		}
		i = j
	}
	return out
}

// stopWords are function words and conversational filler that carry no
// information about which tool is wanted.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all also am an and any are aren as at be because been
before being below between both but by can cannot could couldn did didn do does doesn doing
don down during each either else etc ever every few for from further had hadn has hasn have
haven having he her here hers herself him himself his how however i if in into is isn it its
itself just let ll me might more most much must mustn my myself no nor not now of off on once
only or other ought our ours ourselves out over own per please re same shall shan she should
shouldn so some such than that the their theirs them themselves then there these they this
those through thus to too under until up upon us ve very via was wasn we were weren what when
where whether which while who whom whose why will with within without won would wouldn yet you
your yours yourself yourselves
able additionally anything could e.g eg i.e ie kindly like maybe need needs okay ok really
someone something sure thank thanks want wants wanted wish help`) {
		m[w] = true
	}
	return m
}()
