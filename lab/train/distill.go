package train

// Distillation: a static token table that imitates a sentence encoder. Each
// text's mean token row, L2-normalised, is trained to point where the
// teacher's embedding of the same text points (cosine loss). It trains the
// same table with the same lazy Adam step as Train; only the loss differs.
// The teacher runs once, offline, over a corpus of texts (lab/teacher is the
// one the builtin embedder uses); the student is an ordinary Model2Vec model
// that costs a table lookup per token at query time.
//
// The teacher's vectors are reduced to DistillOptions.Dim dimensions by a
// seeded Gaussian random projection (cosines are kept up to a small
// distortion), so the student can be much smaller than the teacher.
// Everything is seeded and single-threaded: the same inputs give the same
// bytes.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// DistillOptions configure Distill. Zero values take the defaults noted.
type DistillOptions struct {
	// Tokenizer is the student's tokenizer.json (required). The builtin
	// embedder's student shares the builtin model's tokenizer.
	Tokenizer []byte
	// Texts and Vectors are the corpus: the teacher's vector of each text.
	Texts        []string
	Vectors      [][]float32
	Dim          int     // student dimension; 128
	Epochs       int     // passes over the corpus; 8
	BatchSize    int     // texts per Adam step; 32
	LearningRate float64 // Adam step; 0.003
	HoldOut      float64 // share of texts kept out to report the fit; 0.05
	Seed         uint64  // 1
}

func (o *DistillOptions) defaults() {
	if o.Dim <= 0 {
		o.Dim = 128
	}
	if o.Epochs <= 0 {
		o.Epochs = 8
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 32
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 0.003
	}
	if o.HoldOut == 0 {
		o.HoldOut = 0.05
	} else if o.HoldOut < 0 {
		o.HoldOut = 0
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
}

// DistillResult is a trained student and how well it fits the teacher.
type DistillResult struct {
	Model *model2vec.Model
	// Texts is the number of texts trained on (texts without a known token
	// are skipped); HeldOut the number kept out.
	Texts, HeldOut int
	// InitCosine and Cosine are the mean cosine between the student's and
	// the (projected) teacher's vectors of the held-out texts, before and
	// after training (NaN when no text is held out).
	InitCosine, Cosine float64
}

// distillExample is one text: its bag of tokens and the teacher's
// (projected, unit-length) vector.
type distillExample struct {
	b bag
	y []float32
}

// Distill fits a student table to the teacher's vectors. logf, when not nil,
// receives one line per epoch.
func Distill(ctx context.Context, o DistillOptions, logf func(format string, args ...any)) (*DistillResult, error) {
	o.defaults()
	if logf == nil {
		logf = func(string, ...any) {}
	}
	if len(o.Tokenizer) == 0 {
		return nil, errors.New("distill: a tokenizer is required")
	}
	if len(o.Texts) != len(o.Vectors) {
		return nil, fmt.Errorf("distill: %d texts but %d teacher vectors", len(o.Texts), len(o.Vectors))
	}
	if len(o.Texts) == 0 {
		return nil, errors.New("distill: no texts")
	}
	tok, err := model2vec.ParseTokenizer(o.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("distill: %w", err)
	}
	V, D := tok.VocabSize(), o.Dim
	rng := rand.New(rand.NewPCG(o.Seed, 0xd157))

	// The student model is used for its tokenisation: the same path
	// (truncation, unknown tokens dropped) that embeds texts later.
	tab := newTable(V, D)
	student, err := model2vec.New(model2vec.Parts{Embeddings: tab.E, Rows: V, Dim: D, Tokenizer: o.Tokenizer})
	if err != nil {
		return nil, fmt.Errorf("distill: %w", err)
	}
	T := len(o.Vectors[0])
	if T == 0 {
		return nil, errors.New("distill: the teacher's vectors are empty")
	}
	var proj []float64 // T×D, nil when D == T
	if D != T {
		proj = make([]float64, T*D)
		for i := range proj {
			proj[i] = rng.NormFloat64()
		}
	}
	data := make([]distillExample, 0, len(o.Texts))
	y64 := make([]float64, D)
	for i, text := range o.Texts {
		v := o.Vectors[i]
		if len(v) != T {
			return nil, fmt.Errorf("distill: teacher vector %d has %d dimensions, the first has %d", i, len(v), T)
		}
		ids := student.Tokens(text)
		if len(ids) == 0 {
			continue
		}
		clear(y64)
		if proj == nil {
			for j, x := range v {
				y64[j] = float64(x)
			}
		} else {
			for k, x := range v {
				row := proj[k*D : k*D+D]
				for j, p := range row {
					y64[j] += float64(x) * p
				}
			}
		}
		n := 0.0
		for _, x := range y64 {
			n += x * x
		}
		if n == 0 {
			continue
		}
		n = math.Sqrt(n)
		y := make([]float32, D)
		for j, x := range y64 {
			y[j] = float32(x / n)
		}
		data = append(data, distillExample{b: makeBag(ids), y: y})
	}
	if len(data) == 0 {
		return nil, errors.New("distill: no text has a token of the tokenizer")
	}
	rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
	nVal := int(o.HoldOut * float64(len(data)))
	val, fitSet := data[:nVal], data[nVal:]
	if len(fitSet) == 0 {
		return nil, errors.New("distill: every text is held out")
	}

	for i := range tab.E {
		tab.E[i] = float32(0.01 * rng.NormFloat64())
	}
	// The cosine is the same for a text's sum of rows as for their mean, so
	// the table's own embed (the sum) serves.
	p := make([]float32, D)
	fit := func() float64 {
		if len(val) == 0 {
			return math.NaN()
		}
		s := 0.0
		for _, e := range val {
			if np := tab.embed(e.b, p); np > 0 {
				s += float64(dot(p, e.y) / np)
			}
		}
		return s / float64(len(val))
	}
	res := &DistillResult{Texts: len(fitSet), HeldOut: len(val), InitCosine: fit()}
	logf("distill: %d texts (%d held out), %d tokens × %d dimensions, teacher %d dimensions; held-out cosine %s", len(fitSet), len(val), V, D, T, fmtCos(res.InitCosine))

	adam := adamConfig{lr: o.LearningRate, beta1: 0.9, beta2: 0.999, eps: 1e-8}
	grads := []*sparseGrad{newSparseGrad(V, D)}
	gp := make([]float32, D)
	for ep := 1; ep <= o.Epochs; ep++ {
		rng.Shuffle(len(fitSet), func(i, j int) { fitSet[i], fitSet[j] = fitSet[j], fitSet[i] })
		loss := 0.0
		for s := 0; s < len(fitSet); s += o.BatchSize {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			for _, e := range fitSet[s:min(s+o.BatchSize, len(fitSet))] {
				// p is the sum of the rows (the cosine of the mean).
				np := tab.embed(e.b, p)
				if np == 0 {
					continue
				}
				d := dot(p, e.y)
				loss += 1 - float64(d/np)
				// ∂(−cos)/∂p = −(y/|p| − (p·y)·p/|p|³), added to each
				// token's row once per occurrence.
				for j := range p {
					gp[j] = -(e.y[j]/np - d*p[j]/(np*np*np))
				}
				for i, id := range e.b.ids {
					grads[0].add(id, e.b.counts[i], gp)
				}
			}
			tab.apply(grads, adam, 1)
			grads[0].reset()
		}
		res.Cosine = fit()
		logf("distill: epoch %d: loss %.4f, held-out cosine %s", ep, loss/float64(len(fitSet)), fmtCos(res.Cosine))
	}
	res.Model, err = model2vec.New(model2vec.Parts{
		Embeddings: tab.E, Rows: V, Dim: D, Tokenizer: o.Tokenizer,
		Config:   map[string]any{"normalize": true},
		Metadata: map[string]string{"distilled": "cosine to a sentence encoder's vectors", "teacher_dim": fmt.Sprint(T), "seed": fmt.Sprint(o.Seed)},
	})
	if err != nil {
		return nil, fmt.Errorf("distill: %w", err)
	}
	return res, nil
}

// WriteTexts writes texts as JSON lines (one JSON string per line), the
// teacher's input.
func WriteTexts(w io.Writer, texts []string) error {
	bw := bufio.NewWriter(w)
	for _, t := range texts {
		b, err := json.Marshal(t)
		if err != nil {
			return err
		}
		bw.Write(b)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// fmtCos formats a held-out cosine, "n/a" when nothing is held out.
func fmtCos(c float64) string {
	if math.IsNaN(c) {
		return "n/a (nothing held out)"
	}
	return fmt.Sprintf("%.4f", c)
}

// CorpusTexts returns the distillation corpus of a training corpus: every
// tool's document and every query, each cut by TeacherText, without
// duplicates, in the corpus' order (tools first).
func CorpusTexts(c *Corpus) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = TeacherText(s)
		if s == "" || seen[s] {
			return
		}
		seen[s] = true
		out = append(out, s)
	}
	for _, t := range c.Tools {
		add(t.Document())
	}
	for _, p := range c.Pairs {
		add(p.Query)
	}
	return out
}
