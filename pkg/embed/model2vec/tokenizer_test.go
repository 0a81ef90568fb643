package model2vec

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

var testVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]",
	"hello", "world", ",", "!", "un", "##aff", "##able", "cafe", "中", "文",
	"get", "_", "weather", "forecast", "##s", "a", "b", "##b", "naive", "résumé", "resume", ".", "-", "'", "s",
}

func testTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	j, err := WordPieceJSON(testVocab, "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := ParseTokenizer(j)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

func tokensOf(tok *Tokenizer, ids []int) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = tok.Token(id)
	}
	return out
}

func TestTokenizerEncode(t *testing.T) {
	tok := testTokenizer(t)
	tests := []struct {
		name, in string
		want     []string
	}{
		{"lowercase and whitespace", "  Hello\tWORLD\n", []string{"hello", "world"}},
		{"punctuation isolated", "hello,world!", []string{"hello", ",", "world", "!"}},
		{"continuation pieces", "unaffable", []string{"un", "##aff", "##able"}},
		{"accents stripped", "Café", []string{"cafe"}},
		{"accented vocab entry unreachable", "résumé", []string{"resume"}},
		{"cjk split per char", "中文", []string{"中", "文"}},
		{"cjk inside latin", "hello中world", []string{"hello", "中", "world"}},
		{"unknown word becomes one unk", "helloq world", []string{"[UNK]", "world"}},
		{"snake case", "get_weather", []string{"get", "_", "weather"}},
		{"plural piece", "forecasts", []string{"forecast", "##s"}},
		{"control chars removed", "hel\x00lo\u200b", []string{"hello"}},
		{"special token kept", "hello [CLS] world", []string{"hello", "[CLS]", "world"}},
		{"special token lowercase is text", "[cls]", []string{"[UNK]", "[UNK]", "[UNK]"}},
		{"apostrophe", "world's", []string{"world", "'", "s"}},
		{"long word", strings.Repeat("b", 101), []string{"[UNK]"}},
		{"long word at limit", strings.Repeat("b", 100), append([]string{"b"}, repeat("##b", 99)...)},
		{"empty", "", []string{}},
		{"invalid utf8 dropped", "hello\xffworld", []string{"[UNK]"}}, // "helloworld"
		{"nbsp is whitespace", "hello\u00a0world", []string{"hello", "world"}},
		{"unicode dash punctuation", "hello\u2014world", []string{"hello", "[UNK]", "world"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tokensOf(tok, tok.Encode(tt.in))
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Encode(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func repeat(s string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = s
	}
	return out
}

func TestParseTokenizerErrors(t *testing.T) {
	tests := []struct {
		name, json, want string
	}{
		{"not json", `{`, "tokenizer.json"},
		{"bpe", `{"model":{"type":"BPE","vocab":{"a":0}}}`, `model type "BPE" is not supported`},
		{"empty vocab", `{"model":{"type":"WordPiece","vocab":{}}}`, "vocabulary is empty"},
		{"unk missing", `{"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"a":0}}}`, `"[UNK]" is not in the vocabulary`},
		{"negative id", `{"model":{"type":"WordPiece","vocab":{"a":-1}}}`, "out of range"},
		{"huge id", `{"model":{"type":"WordPiece","vocab":{"a":49999999}}}`, "out of range"},
		{"duplicate id", `{"model":{"type":"WordPiece","vocab":{"a":0,"b":0}}}`, "share id 0"},
		{"bad normalizer", `{"normalizer":{"type":"Precompiled"},"model":{"type":"WordPiece","vocab":{"a":0}}}`, `normalizer type "Precompiled"`},
		{"bad pre-tokenizer", `{"pre_tokenizer":{"type":"Metaspace"},"model":{"type":"WordPiece","vocab":{"a":0}}}`, `pre_tokenizer type "Metaspace"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ParseTokenizer([]byte(tt.json))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestTokenizerSequenceComponents(t *testing.T) {
	j := `{"normalizer":{"type":"Sequence","normalizers":[{"type":"NFD"},{"type":"StripAccents"},{"type":"Lowercase"}]},
	"pre_tokenizer":{"type":"Sequence","pretokenizers":[{"type":"WhitespaceSplit"},{"type":"Punctuation","behavior":"Isolated"}]},
	"model":{"type":"WordPiece","unk_token":"[UNK]","vocab":{"[UNK]":0,"cafe":1,"!":2,"x":3,"##y":4}}}`
	tok, err := ParseTokenizer([]byte(j))
	if err != nil {
		t.Fatal(err)
	}
	got := tokensOf(tok, tok.Encode("CAFÉ! xy"))
	want := []string{"cafe", "!", "x", "##y"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// TestBERTVocabulary checks well-known ids of the bert-base-uncased
// vocabulary when the all-MiniLM-L6-v2 module is in the module cache.
func TestBERTVocabulary(t *testing.T) {
	out, err := exec.Command("go", "env", "GOMODCACHE").Output()
	if err != nil {
		t.Skip("go env GOMODCACHE:", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9/all_minilm_l6_v2/tokenizer.json")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skip("BERT tokenizer.json not in the module cache (go mod download github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9)")
	}
	tok, err := ParseTokenizer(data)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want []int
	}{
		{"hello world", []int{7592, 2088}},
		{"Hello, World!", []int{7592, 1010, 2088, 999}},
		{"[CLS] the [SEP]", []int{101, 1996, 102}},
	}
	for _, tt := range tests {
		if got := tok.Encode(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Encode(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func BenchmarkTokenize(b *testing.B) {
	tok := testTokenizer(b)
	text := "Get the weather forecast for a city, hello world! Café résumé unaffable 中文"
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		tok.encode(text, nil, DefaultMaxTokens, true)
	}
}

func FuzzEncode(f *testing.F) {
	tok := testTokenizer(f)
	for _, s := range []string{"hello world", "Café 中文 [CLS]", "un\u0301affable", "\xff\xfe", strings.Repeat("b", 120)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids := tok.Encode(s)
		for _, id := range ids {
			if tok.Token(id) == "" {
				t.Fatalf("Encode(%q) returned id %d outside the vocabulary", s, id)
			}
		}
		if n := len(tok.encode(s, nil, 3, true)); n > 3 {
			t.Fatalf("max 3 returned %d ids", n)
		}
	})
}

// TestOneStepNormalizers: each normalizer without options does its one
// step (checked on text that every one of them changes).
func TestOneStepNormalizers(t *testing.T) {
	tests := []struct{ typ, in, want string }{
		{"Lowercase", "ÉCOLE", "école"},
		{"NFD", "é", "e\u0301"},
		{"NFKD", "ﬁé", "fie\u0301"},
		{"NFC", "e\u0301", "é"},
		{"NFKC", "ﬁe\u0301", "fié"},
		{"StripAccents", "e\u0301", "e"},
		{"Strip", "  x  ", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.typ, func(t *testing.T) {
			steps, err := parseNormalizer(json.RawMessage(`{"type":"` + tt.typ + `"}`))
			if err != nil {
				t.Fatal(err)
			}
			tok := &Tokenizer{norm: steps}
			if got := tok.normalize(tt.in); got != tt.want {
				t.Errorf("%s(%q) = %q, want %q", tt.typ, tt.in, got, tt.want)
			}
		})
	}
}
