package catalog

import (
	"slices"
	"strings"
	"testing"
	"unicode"
)

// splitNameRunes is SplitName as it was (over a rune slice), the reference
// of TestSplitNameAsBefore.
func splitNameRunes(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	rs := []rune(name)
	for i, r := range rs {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r):
			if len(cur) > 0 {
				prev := rs[i-1]
				nextLower := i+1 < len(rs) && unicode.IsLower(rs[i+1])
				if unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower) {
					flush()
				}
			}
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
	}
	flush()
	return words
}

// SplitName cuts words by byte offsets; it must split exactly as the rune
// version did, on ASCII, camel case, acronyms, other scripts, digits,
// invalid UTF-8 and upper-case letters whose lower case has another
// length.
func TestSplitNameAsBefore(t *testing.T) {
	cases := []string{
		"", "a", "A", "getHTTPResponse_v2", "snake_case-and.kebab case", "HTTPResponse", "XMLHttpRequest2Go",
		"ÉcoleNormale", "straße_ÜBER", "İstanbulİzmir", "ΣΊΣΥΦΟΣ σίσυφος", "数据库查询Tool", "tool名前Name",
		"abc\xffdef", "\xff\xfeA", "ǅungla", "ⅫRoman", "a1B2c3", "ID", "iD", "Ab", "aB", "ABc", "KELVIN\u212aSign",
		"  leading and trailing  ", "a__b--c..d", "emoji😀inside", "ﬁle_ﬂow",
		strings.Repeat("longCamelCaseWordHTTPSServer_", 20),
	}
	for _, c := range cases {
		got, want := SplitName(c), splitNameRunes(c)
		if !slices.Equal(got, want) {
			t.Errorf("SplitName(%q) = %q, want %q", c, got, want)
		}
	}
}

func FuzzSplitNameAsBefore(f *testing.F) {
	f.Add("getHTTPResponse_v2")
	f.Add("straße_ÜBER\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := SplitName(s), splitNameRunes(s); !slices.Equal(got, want) {
			t.Fatalf("SplitName(%q) = %q, want %q", s, got, want)
		}
	})
}
