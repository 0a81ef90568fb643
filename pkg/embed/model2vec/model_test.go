package model2vec

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
	"unicode"
)

// fixture builds a random model over testVocab.
func fixture(t testing.TB, dim int, withWeights, withMapping bool, seed uint64) Parts {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 1))
	tj, err := WordPieceJSON(testVocab, "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	rows := len(testVocab)
	p := Parts{Tokenizer: tj, Dim: dim}
	if withMapping {
		rows = 7
		p.Mapping = make([]int32, len(testVocab))
		for i := range p.Mapping {
			p.Mapping[i] = int32(rng.IntN(rows))
		}
	}
	p.Rows = rows
	p.Embeddings = make([]float32, rows*dim)
	for i := range p.Embeddings {
		p.Embeddings[i] = float32(rng.NormFloat64())
	}
	if withWeights {
		p.Weights = make([]float32, len(testVocab))
		for i := range p.Weights {
			p.Weights[i] = float32(0.1 + 2*rng.Float64())
		}
	}
	return p
}

// naiveIDs tokenizes ASCII text the slow, obvious way.
func naiveIDs(text string) []int {
	index := map[string]int{}
	for i, v := range testVocab {
		index[v] = i
	}
	var words []string
	cur := ""
	for _, r := range strings.ToLower(text) {
		switch {
		case unicode.IsSpace(r):
			if cur != "" {
				words = append(words, cur)
			}
			cur = ""
		case unicode.IsPunct(r) || unicode.IsSymbol(r):
			if cur != "" {
				words = append(words, cur)
			}
			words = append(words, string(r))
			cur = ""
		default:
			cur += string(r)
		}
	}
	if cur != "" {
		words = append(words, cur)
	}
	var ids []int
	for _, w := range words {
		var pieces []int
		ok := true
		for start := 0; start < len(w) && ok; {
			ok = false
			for end := len(w); end > start; end-- {
				s := w[start:end]
				if start > 0 {
					s = "##" + s
				}
				if id, found := index[s]; found {
					pieces = append(pieces, id)
					start, ok = end, true
					break
				}
			}
		}
		if ok {
			ids = append(ids, pieces...)
		}
	}
	return ids
}

func naiveEmbed(p Parts, text string, normalize bool) []float64 {
	out := make([]float64, p.Dim)
	ids := naiveIDs(text)
	for _, id := range ids {
		row := id
		if p.Mapping != nil {
			row = int(p.Mapping[id])
		}
		w := 1.0
		if p.Weights != nil {
			w = float64(p.Weights[id])
		}
		for j := 0; j < p.Dim; j++ {
			out[j] += w * float64(p.Embeddings[row*p.Dim+j]) / float64(len(ids))
		}
	}
	if normalize && len(ids) > 0 {
		var ss float64
		for _, v := range out {
			ss += v * v
		}
		for j := range out {
			out[j] /= math.Sqrt(ss)
		}
	}
	return out
}

var embedTexts = []string{
	"hello world",
	"Get the weather forecast, a b!",
	"unaffable cafe-resume's",
	"nothing known here",
	"",
	"forecasts forecasts forecasts weather",
}

func TestEmbedMatchesReference(t *testing.T) {
	tests := []struct {
		dtype          DType
		weights, mapng bool
		normalize      bool
		tol            float64
	}{
		{F32, false, false, true, 1e-6},
		{F32, true, false, true, 1e-6},
		{F32, true, true, true, 1e-6},
		{F32, false, true, false, 1e-5},
		{F16, false, false, true, 2e-3},
		{F16, true, true, true, 2e-3},
		{I8, false, false, true, 2e-2},
		{I8, true, false, false, 2e-2},
		{I8, true, true, true, 2e-2},
	}
	for i, tt := range tests {
		name := fmt.Sprintf("%s/weights=%v/mapping=%v/normalize=%v", tt.dtype, tt.weights, tt.mapng, tt.normalize)
		t.Run(name, func(t *testing.T) {
			p := fixture(t, 16, tt.weights, tt.mapng, uint64(i+1))
			p.Config = map[string]any{"normalize": tt.normalize}
			m, err := New(p)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			if err := Save(dir, m, tt.dtype); err != nil {
				t.Fatal(err)
			}
			loaded, err := LoadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			if loaded.Dim() != 16 {
				t.Fatalf("Dim = %d", loaded.Dim())
			}
			if !strings.HasPrefix(loaded.ID(), "model2vec:") || len(loaded.ID()) != len("model2vec:")+16 {
				t.Fatalf("ID = %q", loaded.ID())
			}
			for _, text := range embedTexts {
				want := naiveEmbed(p, text, tt.normalize)
				for _, mm := range []*Model{m, loaded} {
					got := mm.Embed(text)
					scale := 1.0
					if !tt.normalize {
						scale = norm64(want) + 1e-9
					}
					for j := range want {
						if d := math.Abs(float64(got[j])-want[j]) / scale; d > tt.tol {
							t.Fatalf("Embed(%q)[%d] = %v, want %v (diff %.2g > %.2g)", text, j, got[j], want[j], d, tt.tol)
						}
					}
				}
			}
		})
	}
}

func norm64(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

func TestEmbedTruncatesAt512Tokens(t *testing.T) {
	p := fixture(t, 8, false, false, 7)
	m, err := New(p)
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("hello ", 512) + strings.Repeat("world ", 100)
	if got := len(m.Tokens(long)); got != 512 {
		t.Fatalf("len(Tokens) = %d, want 512", got)
	}
	a, b := m.Embed(long), m.Embed("hello")
	for j := range a {
		if math.Abs(float64(a[j]-b[j])) > 1e-5 {
			t.Fatalf("tokens after 512 changed the embedding: %v vs %v", a, b)
		}
	}
}

func TestEmbedDropsUnknown(t *testing.T) {
	p := fixture(t, 8, false, false, 9)
	m, _ := New(p)
	a, b := m.Embed("hello zzzz qqqq"), m.Embed("hello")
	for j := range a {
		if a[j] != b[j] {
			t.Fatalf("unknown tokens changed the embedding")
		}
	}
	for _, v := range m.Embed("zzzz") {
		if v != 0 {
			t.Fatalf("all-unknown text should embed to zero, got %v", m.Embed("zzzz"))
		}
	}
}

func TestIDStableAndDistinct(t *testing.T) {
	p := fixture(t, 8, true, false, 3)
	m1, _ := New(p)
	m2, _ := New(p)
	if m1.ID() != m2.ID() {
		t.Fatalf("same parts, different ids %s %s", m1.ID(), m2.ID())
	}
	p.Embeddings[0] += 1
	m3, _ := New(p)
	if m3.ID() == m1.ID() {
		t.Fatalf("changed table kept id %s", m1.ID())
	}
	dir1, dir2 := t.TempDir(), t.TempDir()
	if err := Save(dir1, m1, I8); err != nil {
		t.Fatal(err)
	}
	if err := Save(dir2, m2, I8); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(filepath.Join(dir1, SafetensorsFile))
	b, _ := os.ReadFile(filepath.Join(dir2, SafetensorsFile))
	if string(a) != string(b) {
		t.Fatal("Save is not byte-reproducible")
	}
}

func TestLoadFSSentenceTransformersLayout(t *testing.T) {
	p := fixture(t, 4, false, false, 5)
	m, _ := New(p)
	st, tj, _, err := m.files(F32)
	if err != nil {
		t.Fatal(err)
	}
	// Rename the tensor as sentence-transformers' StaticEmbedding does.
	tensors, _, _ := parseSafetensors(st)
	tensors["embedding.weight"] = tensors["embeddings"]
	delete(tensors, "embeddings")
	st2, _ := writeSafetensors(tensors, nil)
	fsys := fstest.MapFS{
		"0_StaticEmbedding/model.safetensors": {Data: st2},
		"0_StaticEmbedding/tokenizer.json":    {Data: tj},
		"config.json":                         {Data: []byte(`{}`)},
	}
	got, err := LoadFS(fsys)
	if err != nil {
		t.Fatal(err)
	}
	want := m.Embed("hello world")
	for j, v := range got.Embed("hello world") {
		if math.Abs(float64(v-want[j])) > 1e-6 {
			t.Fatal("embedding differs")
		}
	}
}

func TestLoadErrors(t *testing.T) {
	p := fixture(t, 4, true, true, 11)
	m, _ := New(p)
	st, tj, cj, _ := m.files(F32)
	tensors, _, _ := parseSafetensors(st)
	rewrite := func(f func(map[string]tensor)) []byte {
		c := map[string]tensor{}
		for k, v := range tensors {
			c[k] = v
		}
		f(c)
		b, err := writeSafetensors(c, nil)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	hugeHeader := make([]byte, 16)
	binary.LittleEndian.PutUint64(hugeHeader, 1<<40)
	pastEnd := make([]byte, 16)
	binary.LittleEndian.PutUint64(pastEnd, 9)
	badOffsets := append([]byte{}, st...)
	hdr := string(badOffsets)
	hdr = strings.Replace(hdr, `"data_offsets":[0,`, `"data_offsets":[4,`, 1)
	tests := []struct {
		name       string
		st, tj, cj []byte
		want       string
	}{
		{"short file", []byte{1, 2}, tj, cj, "shorter than"},
		{"huge header", hugeHeader, tj, cj, "exceeds"},
		{"header past end", pastEnd, tj, cj, "runs past the end"},
		{"offset mismatch", []byte(hdr), tj, cj, "needs"},
		{"no embeddings", rewrite(func(c map[string]tensor) { delete(c, "embeddings") }), tj, cj, `no "embeddings"`},
		{"1-d embeddings", rewrite(func(c map[string]tensor) { e := c["embeddings"]; e.Shape = []int{len(e.Data) / 4}; c["embeddings"] = e }), tj, cj, "shape [rows, dim]"},
		{"int embeddings", rewrite(func(c map[string]tensor) { e := c["embeddings"]; e.DType = "I32"; c["embeddings"] = e }), tj, cj, "not a float"},
		{"mapping out of range", rewrite(func(c map[string]tensor) {
			c["mapping"] = i32Tensor(append(make([]int32, len(testVocab)-1), 99), len(testVocab))
		}), tj, cj, "maps to row 99"},
		{"weights wrong length", rewrite(func(c map[string]tensor) { c["weights"] = f32Tensor([]float32{1, 2}, 2) }), tj, cj, "weights has 2 entries"},
		{"nan weight", rewrite(func(c map[string]tensor) {
			w := make([]float32, len(testVocab))
			w[3] = float32(math.NaN())
			c["weights"] = f32Tensor(w, len(w))
		}), tj, cj, "weight of token 3"},
		{"vocab larger than table", rewrite(func(c map[string]tensor) { delete(c, "mapping"); delete(c, "weights") }), tj, cj, "tokenizer has"},
		{"bad config", st, tj, []byte(`[`), "config.json"},
		{"bad normalize", st, tj, []byte(`{"normalize":"yes"}`), "normalize must be"},
		{"bad tokenizer", st, []byte(`{}`), cj, "tokenizer.json"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(tt.st, tt.tj, tt.cj)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestLoadDirMissingFile(t *testing.T) {
	_, err := LoadDir(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "model.safetensors") {
		t.Fatalf("err = %v", err)
	}
}

func TestFloat16RoundTrip(t *testing.T) {
	tests := []float32{0, 1, -1, 0.5, 65504, 1e-5, -2.5e-7, 3.14159, 1e6}
	for _, f := range tests {
		got := f16ToF32(f32ToF16(f))
		want := f
		if f > 65504 {
			want = float32(math.Inf(1))
		}
		if math.IsInf(float64(want), 0) {
			if got != want {
				t.Errorf("f16 round trip of %v = %v, want +Inf", f, got)
			}
			continue
		}
		if d := math.Abs(float64(got - want)); d > math.Max(1e-3*math.Abs(float64(want)), 6e-8) {
			t.Errorf("f16 round trip of %v = %v", f, got)
		}
	}
}

func FuzzLoadSafetensors(f *testing.F) {
	p := fixture(f, 4, true, true, 13)
	m, _ := New(p)
	for _, dt := range []DType{F32, F16, I8} {
		st, _, _, _ := m.files(dt)
		f.Add(st)
	}
	tj, _ := WordPieceJSON(testVocab, "[UNK]")
	f.Fuzz(func(t *testing.T, data []byte) {
		mm, err := load(data, tj, []byte(`{}`))
		if err != nil {
			return
		}
		v := mm.Embed("hello world unaffable")
		if len(v) != mm.Dim() {
			t.Fatalf("len = %d, dim = %d", len(v), mm.Dim())
		}
	})
}

// bigModel builds a model with a realistic vocabulary and dimension.
func bigModel(b *testing.B, vocab, dim int) *Model {
	rng := rand.New(rand.NewPCG(1, 2))
	words := []string{"[PAD]", "[UNK]"}
	seen := map[string]bool{}
	for len(words) < vocab {
		n := 2 + rng.IntN(8)
		var sb strings.Builder
		if rng.IntN(3) == 0 {
			sb.WriteString("##")
		}
		for i := 0; i < n; i++ {
			sb.WriteByte(byte('a' + rng.IntN(26)))
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for c := 'a'; c <= 'z'; c++ {
		for _, w := range []string{string(c), "##" + string(c)} {
			if !seen[w] {
				words = append(words, w)
			}
		}
	}
	tj, err := WordPieceJSON(words, "[UNK]")
	if err != nil {
		b.Fatal(err)
	}
	emb := make([]float32, len(words)*dim)
	for i := range emb {
		emb[i] = float32(rng.NormFloat64())
	}
	m, err := New(Parts{Embeddings: emb, Rows: len(words), Dim: dim, Tokenizer: tj})
	if err != nil {
		b.Fatal(err)
	}
	return m
}

func BenchmarkEmbedQuery(b *testing.B) {
	m := bigModel(b, 30000, 256)
	q := "Find the current weather forecast for Paris and convert the temperature to Fahrenheit, then email it to my team."
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Embed(q)
	}
}
