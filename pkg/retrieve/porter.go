package retrieve

// stem reduces an English word to its Porter (1980) stem: "searching",
// "searches" and "searched" all become "search". Words that are not plain
// lower-case ASCII letters are returned unchanged.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	s := &stemmer{b: []byte(w)}
	s.step1ab()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return string(s.b)
}

type stemmer struct {
	b []byte
	j int // end of the stem under consideration (exclusive) after ends()
}

// cons reports whether b[i] is a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		if i == 0 {
			return true
		}
		return !s.cons(i - 1)
	}
	return true
}

// m measures the number of consonant-vowel sequences in b[:j].
func (s *stemmer) m() int {
	n := 0
	i := s.next(0, false)
	for i < s.j {
		if i = s.next(i+1, true); i >= s.j {
			break
		}
		n++
		i = s.next(i+1, false)
	}
	return n
}

// next returns the first i' >= i in b[:j] whose letter is a consonant when
// cons (a vowel otherwise), or j when there is none.
func (s *stemmer) next(i int, cons bool) int {
	for i < s.j && s.cons(i) != cons {
		i++
	}
	return i
}

// vowelInStem reports whether b[:j] contains a vowel.
func (s *stemmer) vowelInStem() bool {
	for i := 0; i < s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[i-1:i+1] is a double consonant.
func (s *stemmer) doublec(i int) bool {
	if i < 1 || s.b[i] != s.b[i-1] {
		return false
	}
	return s.cons(i)
}

// cvc reports whether b[i-2:i+1] is consonant-vowel-consonant and the last
// consonant is not w, x or y.
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b ends with suf and sets j to the stem end.
func (s *stemmer) ends(suf string) bool {
	if len(suf) > len(s.b) {
		return false
	}
	if string(s.b[len(s.b)-len(suf):]) != suf {
		return false
	}
	s.j = len(s.b) - len(suf)
	return true
}

// setto replaces b[j:] with r.
func (s *stemmer) setto(r string) {
	s.b = append(s.b[:s.j], r...)
}

func (s *stemmer) r(r string) {
	if s.m() > 0 {
		s.setto(r)
	}
}

func (s *stemmer) step1ab() {
	if s.b[len(s.b)-1] == 's' {
		switch {
		case s.ends("sses"):
			s.b = s.b[:len(s.b)-2]
		case s.ends("ies"):
			s.setto("i")
		case len(s.b) >= 2 && s.b[len(s.b)-2] != 's':
			s.b = s.b[:len(s.b)-1]
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.b = s.b[:len(s.b)-1]
		}
		return
	}
	if (s.ends("ed") || s.ends("ing")) && s.vowelInStem() {
		s.b = s.b[:s.j]
		switch {
		case s.ends("at"):
			s.setto("ate")
		case s.ends("bl"):
			s.setto("ble")
		case s.ends("iz"):
			s.setto("ize")
		case s.doublec(len(s.b) - 1):
			switch s.b[len(s.b)-1] {
			case 'l', 's', 'z':
			default:
				s.b = s.b[:len(s.b)-1]
			}
		default:
			s.j = len(s.b)
			if s.m() == 1 && s.cvc(len(s.b)-1) {
				s.b = append(s.b, 'e')
			}
		}
	}
}

func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[len(s.b)-1] = 'i'
	}
}

var step2Rules = [][2]string{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"},
	{"izer", "ize"}, {"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"},
	{"ousli", "ous"}, {"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"},
	{"alism", "al"}, {"iveness", "ive"}, {"fulness", "ful"}, {"ousness", "ous"},
	{"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"}, {"logi", "log"},
}

func (s *stemmer) step2() {
	if len(s.b) < 3 {
		return
	}
	for _, r := range step2Rules {
		if s.ends(r[0]) {
			s.r(r[1])
			return
		}
	}
}

var step3Rules = [][2]string{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
	{"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

func (s *stemmer) step3() {
	for _, r := range step3Rules {
		if s.ends(r[0]) {
			s.r(r[1])
			return
		}
	}
}

var step4Suffixes = []string{
	"al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment",
	"ent", "ion", "ou", "ism", "ate", "iti", "ous", "ive", "ize",
}

func (s *stemmer) step4() {
	for _, suf := range step4Suffixes {
		if !s.ends(suf) {
			continue
		}
		if suf == "ion" && (s.j == 0 || (s.b[s.j-1] != 's' && s.b[s.j-1] != 't')) {
			return
		}
		if s.m() > 1 {
			s.b = s.b[:s.j]
		}
		return
	}
}

func (s *stemmer) step5() {
	s.j = len(s.b)
	if s.b[len(s.b)-1] == 'e' {
		s.j = len(s.b) - 1
		a := s.m()
		if a > 1 || (a == 1 && !s.cvc(len(s.b)-2)) {
			s.b = s.b[:len(s.b)-1]
		}
	}
	s.j = len(s.b)
	if s.b[len(s.b)-1] == 'l' && s.doublec(len(s.b)-1) && s.m() > 1 {
		s.b = s.b[:len(s.b)-1]
	}
}
