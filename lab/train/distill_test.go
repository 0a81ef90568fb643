package train

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// distillFixture is a corpus whose teacher is a hidden bag-of-words encoder over
// 40 words with a non-linear twist (the vector of a text is squashed per
// dimension before normalising), so the student can fit it well but not
// exactly.
func distillFixture(t *testing.T, n int) (tok []byte, texts []string, vecs [][]float32) {
	t.Helper()
	rng := rand.New(rand.NewPCG(7, 7))
	words := make([]string, 40)
	hidden := make([][]float64, len(words))
	for i := range words {
		words[i] = fmt.Sprintf("word%c%c", 'a'+i%26, 'a'+i/26)
		hidden[i] = make([]float64, 16)
		for j := range hidden[i] {
			hidden[i][j] = rng.NormFloat64()
		}
	}
	vocab := append([]string{"[PAD]", "[UNK]"}, words...)
	tok, err := model2vec.WordPieceJSON(vocab, "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	for range n {
		k := 2 + rng.IntN(5)
		var ws []string
		v := make([]float64, 16)
		for range k {
			i := rng.IntN(len(words))
			ws = append(ws, words[i])
			for j, x := range hidden[i] {
				v[j] += x
			}
		}
		out := make([]float32, 16)
		for j, x := range v {
			out[j] = float32(math.Tanh(x / 2))
		}
		texts = append(texts, strings.Join(ws, " "))
		vecs = append(vecs, out)
	}
	return tok, texts, vecs
}

func TestDistillFitsTheTeacher(t *testing.T) {
	tok, texts, vecs := distillFixture(t, 3000)
	for _, dim := range []int{16, 8} { // 16: no projection; 8: projected
		t.Run(fmt.Sprint(dim), func(t *testing.T) {
			o := DistillOptions{Tokenizer: tok, Texts: texts, Vectors: vecs, Dim: dim, Epochs: 6, LearningRate: 0.02}
			res, err := Distill(context.Background(), o, t.Logf)
			if err != nil {
				t.Fatal(err)
			}
			if res.HeldOut != 150 || res.Texts != 2850 {
				t.Errorf("texts %d, held out %d; want 2850 and 150", res.Texts, res.HeldOut)
			}
			if res.Cosine < 0.9 || res.Cosine < res.InitCosine+0.5 {
				t.Errorf("held-out cosine %.3f (from %.3f): the student did not learn the teacher", res.Cosine, res.InitCosine)
			}
			if res.Model.Dim() != dim {
				t.Errorf("student dimension %d, want %d", res.Model.Dim(), dim)
			}
			// Same inputs, same table.
			again, err := Distill(context.Background(), o, nil)
			if err != nil {
				t.Fatal(err)
			}
			if a, b := res.Model.Embed(texts[0]), again.Model.Embed(texts[0]); !slices.Equal(a, b) {
				t.Error("two runs with the same seed differ")
			}
		})
	}
}

func TestDistillRejectsBadInput(t *testing.T) {
	tok, texts, vecs := distillFixture(t, 10)
	cases := []struct {
		name string
		o    DistillOptions
		want string
	}{
		{"no tokenizer", DistillOptions{Texts: texts, Vectors: vecs}, "tokenizer is required"},
		{"bad tokenizer", DistillOptions{Tokenizer: []byte("{"), Texts: texts, Vectors: vecs}, "distill:"},
		{"counts differ", DistillOptions{Tokenizer: tok, Texts: texts, Vectors: vecs[:3]}, "10 texts but 3 teacher vectors"},
		{"no texts", DistillOptions{Tokenizer: tok}, "no texts"},
		{"ragged vectors", DistillOptions{Tokenizer: tok, Texts: texts[:2], Vectors: [][]float32{vecs[0], vecs[1][:3]}}, "teacher vector 1 has 3 dimensions, the first has 16"},
		{"no known token", DistillOptions{Tokenizer: tok, Texts: []string{"zzz qqq"}, Vectors: vecs[:1]}, "no text has a token"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Distill(context.Background(), c.o, nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Distill(ctx, DistillOptions{Tokenizer: tok, Texts: texts, Vectors: vecs}, nil); err == nil {
		t.Error("a cancelled context: want an error")
	}
}

func TestWriteTexts(t *testing.T) {
	var buf bytes.Buffer
	texts := []string{"send an email", "line one\nline \"two\""}
	if err := WriteTexts(&buf, texts); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(buf.String(), "\n"); got != 2 {
		t.Fatalf("%d lines, want 2: %q", got, buf.String())
	}
	// The teacher's output for them reads back (the format train reads).
	var in strings.Builder
	for i, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		fmt.Fprintf(&in, `{"t":%s,"v":[%d,1]}`+"\n", l, i)
	}
	ts, _, err := ReadTeacherVectors(strings.NewReader(in.String()))
	if err != nil || !slices.Equal(ts, texts) {
		t.Errorf("read back %q, %v; want %q", ts, err, texts)
	}
}
