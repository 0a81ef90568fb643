package model2vec

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Tokenizer is a Hugging Face tokenizers WordPiece tokenizer read from a
// tokenizer.json file: normaliser (BertNormalizer or a Sequence of
// Lowercase/NFD/NFKD/NFC/NFKC/StripAccents/Strip), pre-tokenizer
// (BertPreTokenizer, Whitespace, WhitespaceSplit, Punctuation or a Sequence
// of them) and a WordPiece model. Special tokens are never added. It is safe
// for concurrent use.
type Tokenizer struct {
	vocab    map[string]int
	tokens   []string // id -> token; "" for ids missing from the vocab
	unk      int      // -1 when the model has no unknown token
	prefix   string
	maxChars int
	norm     []normStep
	pre      []preStep
	added    []addedToken // matched in the raw text before normalisation
}

type addedToken struct {
	content string
	id      int
}

type normStep int

const (
	nsCleanText normStep = iota
	nsChinese
	nsNFD
	nsNFKD
	nsNFC
	nsNFKC
	nsStripAccents
	nsLowercase
	nsStrip
)

type preStep int

const (
	psBert       preStep = iota // whitespace split + punctuation isolated
	psWhitespace                // \w+|[^\w\s]+
	psWSSplit                   // whitespace split
	psPunct                     // punctuation isolated
)

type tokenizerFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type                    string         `json:"type"`
		UnkToken                *string        `json:"unk_token"`
		ContinuingSubwordPrefix *string        `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    *int           `json:"max_input_chars_per_word"`
		Vocab                   map[string]int `json:"vocab"`
	} `json:"model"`
}

type component struct {
	Type             string            `json:"type"`
	CleanText        *bool             `json:"clean_text"`
	HandleChinese    *bool             `json:"handle_chinese_chars"`
	StripAccents     *bool             `json:"strip_accents"`
	Lowercase        *bool             `json:"lowercase"`
	Normalizers      []json.RawMessage `json:"normalizers"`
	Pretokenizers    []json.RawMessage `json:"pretokenizers"`
	Behavior         string            `json:"behavior"`
	StripLeft        *bool             `json:"left"`
	StripRight       *bool             `json:"right"`
	AddPrefixSpace   *bool             `json:"add_prefix_space"`
	UseRegex         *bool             `json:"use_regex"`
	TrimOffsets      *bool             `json:"trim_offsets"`
	PrependScheme    string            `json:"prepend_scheme"`
	Replacement      string            `json:"replacement"`
	Pattern          json.RawMessage   `json:"pattern"`
	Content          *string           `json:"content"`
	InvertPattern    *bool             `json:"invert"`
	IndividualDigits *bool             `json:"individual_digits"`
}

func boolOr(p *bool, def bool) bool {
	if p == nil {
		return def
	}
	return *p
}

// ParseTokenizer reads a tokenizer.json document.
func ParseTokenizer(data []byte) (*Tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if f.Model.Type != "WordPiece" {
		if f.Model.Type == "" && f.Model.Vocab != nil {
			f.Model.Type = "WordPiece" // old files omit the type
		} else {
			return nil, fmt.Errorf("tokenizer.json: model type %q is not supported (only WordPiece)", f.Model.Type)
		}
	}
	if len(f.Model.Vocab) == 0 {
		return nil, fmt.Errorf("tokenizer.json: the WordPiece vocabulary is empty")
	}
	t := &Tokenizer{vocab: f.Model.Vocab, unk: -1, prefix: "##", maxChars: 100}
	maxID := -1
	limit := 2*len(f.Model.Vocab) + 1024 // ids are dense in practice; bounds the table
	for tok, id := range f.Model.Vocab {
		if id < 0 || id >= limit {
			return nil, fmt.Errorf("tokenizer.json: token %q has id %d, out of range for a vocabulary of %d tokens", tok, id, len(f.Model.Vocab))
		}
		if id > maxID {
			maxID = id
		}
	}
	t.tokens = make([]string, maxID+1)
	for tok, id := range f.Model.Vocab {
		if t.tokens[id] != "" && t.tokens[id] != tok {
			return nil, fmt.Errorf("tokenizer.json: tokens %q and %q share id %d", t.tokens[id], tok, id)
		}
		t.tokens[id] = tok
	}
	if f.Model.UnkToken != nil {
		id, ok := f.Model.Vocab[*f.Model.UnkToken]
		if !ok {
			return nil, fmt.Errorf("tokenizer.json: unknown token %q is not in the vocabulary", *f.Model.UnkToken)
		}
		t.unk = id
	}
	if f.Model.ContinuingSubwordPrefix != nil {
		t.prefix = *f.Model.ContinuingSubwordPrefix
	}
	if f.Model.MaxInputCharsPerWord != nil {
		t.maxChars = *f.Model.MaxInputCharsPerWord
	}
	for _, a := range f.AddedTokens {
		if a.Special && a.Content != "" && a.ID >= 0 && a.ID < len(t.tokens) {
			t.added = append(t.added, addedToken{content: a.Content, id: a.ID})
		}
	}
	// Longest first, so that "[CLS]x" style overlaps pick the longest token.
	sort.SliceStable(t.added, func(i, j int) bool { return len(t.added[i].content) > len(t.added[j].content) })
	var err error
	if t.norm, err = parseNormalizer(f.Normalizer); err != nil {
		return nil, err
	}
	if t.pre, err = parsePreTokenizer(f.PreTokenizer); err != nil {
		return nil, err
	}
	return t, nil
}

func isNull(m json.RawMessage) bool {
	s := strings.TrimSpace(string(m))
	return s == "" || s == "null"
}

// parseSteps reads the normalizer or pre_tokenizer (what) of
// tokenizer.json: null is no steps, a Sequence the steps of its parts
// (children picks them out of it), any other type the steps that step
// makes of it.
func parseSteps[S any](m json.RawMessage, depth int, what string, children func(component) []json.RawMessage, step func(component) ([]S, error)) ([]S, error) {
	if isNull(m) {
		return nil, nil
	}
	if depth > 8 {
		return nil, fmt.Errorf("tokenizer.json: %s nesting is too deep", what)
	}
	var c component
	if err := json.Unmarshal(m, &c); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %s: %w", what, err)
	}
	if c.Type != "Sequence" {
		return step(c)
	}
	var steps []S
	for _, sub := range children(c) {
		s, err := parseSteps(sub, depth+1, what, children, step)
		if err != nil {
			return nil, err
		}
		steps = append(steps, s...)
	}
	return steps, nil
}

func parseNormalizer(m json.RawMessage) ([]normStep, error) {
	return parseSteps(m, 0, "normalizer", func(c component) []json.RawMessage { return c.Normalizers }, normSteps)
}

func parsePreTokenizer(m json.RawMessage) ([]preStep, error) {
	return parseSteps(m, 0, "pre_tokenizer", func(c component) []json.RawMessage { return c.Pretokenizers }, preSteps)
}

// normSteps are the steps of a normalizer other than a Sequence.
func normSteps(c component) ([]normStep, error) {
	switch c.Type {
	case "BertNormalizer":
		var steps []normStep
		lower := boolOr(c.Lowercase, true)
		if boolOr(c.CleanText, true) {
			steps = append(steps, nsCleanText)
		}
		if boolOr(c.HandleChinese, true) {
			steps = append(steps, nsChinese)
		}
		if boolOr(c.StripAccents, lower) { // null follows lowercase, as in tokenizers
			steps = append(steps, nsNFD, nsStripAccents)
		}
		if lower {
			steps = append(steps, nsLowercase)
		}
		return steps, nil
	}
	if step, ok := oneNormStep[c.Type]; ok {
		return []normStep{step}, nil
	}
	return nil, fmt.Errorf("tokenizer.json: normalizer type %q is not supported", c.Type)
}

// oneNormStep are the normalizers that are one step, with no options.
var oneNormStep = map[string]normStep{
	"Lowercase":    nsLowercase,
	"NFD":          nsNFD,
	"NFKD":         nsNFKD,
	"NFC":          nsNFC,
	"NFKC":         nsNFKC,
	"StripAccents": nsStripAccents,
	"Strip":        nsStrip,
}

// preSteps are the steps of a pre_tokenizer other than a Sequence.
func preSteps(c component) ([]preStep, error) {
	switch c.Type {
	case "BertPreTokenizer":
		return []preStep{psBert}, nil
	case "Whitespace":
		return []preStep{psWhitespace}, nil
	case "WhitespaceSplit":
		return []preStep{psWSSplit}, nil
	case "Punctuation":
		if c.Behavior != "" && c.Behavior != "isolated" && c.Behavior != "Isolated" {
			return nil, fmt.Errorf("tokenizer.json: Punctuation behavior %q is not supported", c.Behavior)
		}
		return []preStep{psPunct}, nil
	}
	return nil, fmt.Errorf("tokenizer.json: pre_tokenizer type %q is not supported", c.Type)
}

// VocabSize returns one more than the largest token id.
func (t *Tokenizer) VocabSize() int { return len(t.tokens) }

// Token returns the string of a token id ("" when out of range).
func (t *Tokenizer) Token(id int) string {
	if id < 0 || id >= len(t.tokens) {
		return ""
	}
	return t.tokens[id]
}

// ID returns the id of a vocabulary entry.
func (t *Tokenizer) ID(token string) (int, bool) {
	id, ok := t.vocab[token]
	return id, ok
}

// UnkID returns the id of the unknown token, or -1.
func (t *Tokenizer) UnkID() int { return t.unk }

// Encode tokenizes text without special tokens and returns the token ids,
// unknown-token ids included.
func (t *Tokenizer) Encode(text string) []int {
	return t.encode(text, nil, -1, false)
}

// encode appends the ids of text to out. With dropUnk the unknown token is
// skipped; max >= 0 stops after that many ids.
func (t *Tokenizer) encode(text string, out []int, max int, dropUnk bool) []int {
	if len(t.added) == 0 {
		return t.encodeSegment(text, out, max, dropUnk)
	}
	for len(text) > 0 {
		pos, which := -1, -1
		for i, a := range t.added {
			if p := strings.Index(text, a.content); p >= 0 && (pos < 0 || p < pos) {
				pos, which = p, i
			}
		}
		if pos < 0 {
			break
		}
		out = t.encodeSegment(text[:pos], out, max, dropUnk)
		if max >= 0 && len(out) >= max {
			return out
		}
		if id := t.added[which].id; !(dropUnk && id == t.unk) {
			out = append(out, id)
		}
		text = text[pos+len(t.added[which].content):]
	}
	return t.encodeSegment(text, out, max, dropUnk)
}

func (t *Tokenizer) encodeSegment(text string, out []int, max int, dropUnk bool) []int {
	if text == "" {
		return out
	}
	text = t.normalize(text)
	var buf []byte
	emit := func(word string) bool {
		if max >= 0 && len(out) >= max {
			return false
		}
		out, buf = t.wordPiece(word, out, buf, dropUnk)
		if max >= 0 && len(out) > max {
			out = out[:max]
		}
		return true
	}
	t.preTokenize(text, emit)
	return out
}

// unicodeForms are the Unicode normalisation forms of the normaliser steps
// that apply one (ASCII text is the same in all four).
var unicodeForms = map[normStep]norm.Form{nsNFD: norm.NFD, nsNFKD: norm.NFKD, nsNFC: norm.NFC, nsNFKC: norm.NFKC}

// normalize applies the normaliser steps.
func (t *Tokenizer) normalize(s string) string {
	for _, st := range t.norm {
		switch st {
		case nsCleanText:
			s = cleanText(s)
		case nsChinese:
			s = padChinese(s)
		case nsNFD, nsNFKD, nsNFC, nsNFKC:
			if !isASCII(s) {
				s = unicodeForms[st].String(s)
			}
		case nsStripAccents:
			if !isASCII(s) {
				s = strings.Map(func(r rune) rune {
					if unicode.Is(unicode.Mn, r) {
						return -1
					}
					return r
				}, s)
			}
		case nsLowercase:
			s = strings.ToLower(s)
		case nsStrip:
			s = strings.TrimSpace(s)
		}
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// isBertControl mirrors tokenizers' is_control: Unicode "other" categories
// (Cc, Cf, Co, Cs and unassigned) except tab, newline and carriage return.
func isBertControl(r rune) bool {
	switch r {
	case '\t', '\n', '\r':
		return false
	}
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f
	}
	return unicode.In(r, unicode.Cc, unicode.Cf, unicode.Co, unicode.Cs) ||
		!unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S, unicode.Z)
}

func cleanText(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= utf8.RuneSelf || c < 0x20 || c == 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch {
		case r == 0 || r == utf8.RuneError || isBertControl(r):
		case unicode.IsSpace(r):
			b.WriteByte(' ')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isChinese(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) ||
		(r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) ||
		(r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) ||
		(r >= 0x2B920 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) ||
		(r >= 0x2F800 && r <= 0x2FA1F)
}

func padChinese(s string) string {
	if isASCII(s) {
		return s
	}
	has := false
	for _, r := range s {
		if isChinese(r) {
			has = true
			break
		}
	}
	if !has {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if isChinese(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isBertPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126)
	}
	return unicode.IsPunct(r)
}

func isWordChar(r rune) bool {
	return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r) || unicode.Is(unicode.Nl, r) || unicode.Is(unicode.No, r) || unicode.Is(unicode.Mc, r) || unicode.Is(unicode.Pc, r)
}

// preTokenize splits normalised text into words and passes each to emit,
// stopping when emit returns false.
func (t *Tokenizer) preTokenize(s string, emit func(string) bool) {
	if len(t.pre) == 0 {
		// No pre-tokenizer: the whole text is one word (as in tokenizers).
		if s != "" {
			emit(s)
		}
		return
	}
	words := []string{s}
	last := len(t.pre) - 1
	for i, st := range t.pre {
		var next []string
		collect := func(w string) bool { next = append(next, w); return true }
		out := collect
		if i == last {
			out = emit
		}
		for _, w := range words {
			if !splitWords(w, st, out) {
				return
			}
		}
		words = next
	}
}

// splitWords splits s by one pre-tokenizer step.
func splitWords(s string, st preStep, emit func(string) bool) bool {
	start := -1
	class := 0 // 1 word chars, 2 other non-space (Whitespace pre-tokenizer)
	// cut emits the word in progress, if any, as ending at end.
	cut := func(end int) bool {
		if start < 0 {
			return true
		}
		w := s[start:end]
		start = -1
		return emit(w)
	}
	for i, r := range s {
		if unicode.IsSpace(r) && st != psPunct {
			if !cut(i) {
				return false
			}
			continue
		}
		switch st {
		case psBert, psPunct:
			if isBertPunct(r) {
				if !cut(i) || !emit(s[i:i+utf8.RuneLen(r)]) {
					return false
				}
				continue
			}
		case psWhitespace:
			c := 2
			if isWordChar(r) {
				c = 1
			}
			if c != class && !cut(i) {
				return false
			}
			class = c
		}
		if start < 0 {
			start = i
		}
	}
	return cut(len(s))
}

// wordPiece appends the ids of one word (greedy longest match first).
func (t *Tokenizer) wordPiece(word string, out []int, buf []byte, dropUnk bool) ([]int, []byte) {
	unk := func() []int {
		if dropUnk || t.unk < 0 {
			return out
		}
		return append(out, t.unk)
	}
	if utf8.RuneCountInString(word) > t.maxChars {
		return unk(), buf
	}
	n0 := len(out)
	start := 0
	for start < len(word) {
		end := len(word)
		found := -1
		for end > start {
			var id int
			var ok bool
			if start == 0 {
				id, ok = t.vocab[word[:end]]
			} else {
				buf = append(buf[:0], t.prefix...)
				buf = append(buf, word[start:end]...)
				id, ok = t.vocab[string(buf)]
			}
			if ok {
				found = id
				break
			}
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			out = out[:n0]
			return unk(), buf
		}
		out = append(out, found)
		start = end
	}
	return out, buf
}

// WordPieceJSON returns a tokenizer.json document (Hugging Face tokenizers
// format) for a BERT-style uncased WordPiece tokenizer over vocab, where
// vocab[i] is the token with id i. unk names the unknown token, which must
// be in vocab.
func WordPieceJSON(vocab []string, unk string) ([]byte, error) {
	seen := make(map[string]bool, len(vocab))
	hasUnk := false
	for _, v := range vocab {
		if v == "" {
			return nil, fmt.Errorf("tokenizer vocabulary has an empty token")
		}
		if seen[v] {
			return nil, fmt.Errorf("tokenizer vocabulary has token %q twice", v)
		}
		seen[v] = true
		hasUnk = hasUnk || v == unk
	}
	if !hasUnk {
		return nil, fmt.Errorf("unknown token %q is not in the vocabulary", unk)
	}
	var b strings.Builder
	b.WriteString(`{"version":"1.0","truncation":null,"padding":null,"added_tokens":[`)
	first := true
	for i, v := range vocab {
		if len(v) > 2 && v[0] == '[' && v[len(v)-1] == ']' && strings.ToUpper(v) == v {
			if !first {
				b.WriteByte(',')
			}
			first = false
			c, _ := json.Marshal(v)
			fmt.Fprintf(&b, `{"id":%d,"content":%s,"single_word":false,"lstrip":false,"rstrip":false,"normalized":false,"special":true}`, i, c)
		}
	}
	b.WriteString(`],"normalizer":{"type":"BertNormalizer","clean_text":true,"handle_chinese_chars":true,"strip_accents":null,"lowercase":true},`)
	b.WriteString(`"pre_tokenizer":{"type":"BertPreTokenizer"},"post_processor":null,"decoder":{"type":"WordPiece","prefix":"##","cleanup":true},`)
	u, _ := json.Marshal(unk)
	fmt.Fprintf(&b, `"model":{"type":"WordPiece","unk_token":%s,"continuing_subword_prefix":"##","max_input_chars_per_word":100,"vocab":{`, u)
	for i, v := range vocab {
		if i > 0 {
			b.WriteByte(',')
		}
		c, _ := json.Marshal(v)
		fmt.Fprintf(&b, "%s:%d", c, i)
	}
	b.WriteString("}}}")
	return []byte(b.String()), nil
}
