// Package distill learns a static token table that imitates a sentence
// encoder: each text's mean token row, L2-normalised, is trained to point
// where the teacher's embedding of the same text points (cosine loss, lazy
// Adam over the rows a batch touches). The teacher runs once, offline, over
// a corpus of texts (see teacher/ for the one the builtin embedder uses);
// the student is an ordinary Model2Vec model that costs a table lookup per
// token at query time.
//
// The teacher's vectors are reduced to Options.Dim dimensions by a seeded
// Gaussian random projection (cosines are kept up to a small distortion), so
// the student can be much smaller than the teacher. Everything is seeded and
// single-threaded: the same inputs give the same bytes.
package distill

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"

	"github.com/toolrag/mcp-gateway/pkg/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/train"
)

// Options configure Train. Zero values take the defaults noted.
type Options struct {
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

func (o *Options) defaults() {
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

// Result is a trained student and how well it fits the teacher.
type Result struct {
	Model *model2vec.Model
	// Texts is the number of texts trained on (texts without a known token
	// are skipped); HeldOut the number kept out.
	Texts, HeldOut int
	// InitCosine and Cosine are the mean cosine between the student's and
	// the (projected) teacher's vectors of the held-out texts, before and
	// after training (NaN when no text is held out).
	InitCosine, Cosine float64
}

type example struct {
	ids []int
	y   []float64 // projected teacher vector, unit length
}

// Train fits a student table to the teacher's vectors. logf, when not nil,
// receives one line per epoch.
func Train(ctx context.Context, o Options, logf func(format string, args ...any)) (*Result, error) {
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
	table := make([]float32, V*D)
	student, err := model2vec.New(model2vec.Parts{Embeddings: table, Rows: V, Dim: D, Tokenizer: o.Tokenizer})
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
	data := make([]example, 0, len(o.Texts))
	for i, text := range o.Texts {
		v := o.Vectors[i]
		if len(v) != T {
			return nil, fmt.Errorf("distill: teacher vector %d has %d dimensions, the first has %d", i, len(v), T)
		}
		ids := student.Tokens(text)
		if len(ids) == 0 {
			continue
		}
		y := make([]float64, D)
		if proj == nil {
			for j, x := range v {
				y[j] = float64(x)
			}
		} else {
			for k, x := range v {
				row := proj[k*D : k*D+D]
				for j, p := range row {
					y[j] += float64(x) * p
				}
			}
		}
		if unit(y) == 0 {
			continue
		}
		data = append(data, example{ids: ids, y: y})
	}
	if len(data) == 0 {
		return nil, errors.New("distill: no text has a token of the tokenizer")
	}
	rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
	nVal := int(o.HoldOut * float64(len(data)))
	val, train := data[:nVal], data[nVal:]
	if len(train) == 0 {
		return nil, errors.New("distill: every text is held out")
	}

	R := make([]float64, V*D)
	for i := range R {
		R[i] = 0.01 * rng.NormFloat64()
	}
	mean := func(ids []int, out []float64) {
		clear(out)
		for _, id := range ids {
			for j, x := range R[id*D : id*D+D] {
				out[j] += x
			}
		}
		inv := 1 / float64(len(ids))
		for j := range out {
			out[j] *= inv
		}
	}
	p := make([]float64, D)
	fit := func() float64 {
		if len(val) == 0 {
			return math.NaN()
		}
		s := 0.0
		for _, e := range val {
			mean(e.ids, p)
			s += cosine(p, e.y)
		}
		return s / float64(len(val))
	}
	res := &Result{Texts: len(train), HeldOut: len(val), InitCosine: fit()}
	logf("distill: %d texts (%d held out), %d tokens × %d dimensions, teacher %d dimensions; held-out cosine %s", len(train), len(val), V, D, T, fmtCos(res.InitCosine))

	m, v := make([]float64, V*D), make([]float64, V*D)
	const b1, b2, eps = 0.9, 0.999, 1e-8
	grads := map[int][]float64{}
	var touched []int // rows of grads in first-touch order (determinism)
	step := 0
	gp := make([]float64, D)
	for ep := 1; ep <= o.Epochs; ep++ {
		rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
		loss := 0.0
		for s := 0; s < len(train); s += o.BatchSize {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			touched = touched[:0]
			for _, e := range train[s:min(s+o.BatchSize, len(train))] {
				mean(e.ids, p)
				np := norm(p)
				if np == 0 {
					continue
				}
				dot := 0.0
				for j := range p {
					dot += p[j] * e.y[j]
				}
				loss += 1 - dot/np
				// ∂(−cos)/∂p = −(y/|p| − (p·y)·p/|p|³), shared by the
				// text's tokens through the mean.
				inv := 1 / float64(len(e.ids))
				for j := range p {
					gp[j] = -(e.y[j]/np - dot*p[j]/(np*np*np)) * inv
				}
				for _, id := range e.ids {
					g := grads[id]
					if g == nil {
						g = make([]float64, D)
						grads[id] = g
						touched = append(touched, id)
					}
					for j, x := range gp {
						g[j] += x
					}
				}
			}
			step++
			c1 := 1 - math.Pow(b1, float64(step))
			c2 := 1 - math.Pow(b2, float64(step))
			for _, id := range touched {
				g := grads[id]
				for j, x := range g {
					k := id*D + j
					m[k] = b1*m[k] + (1-b1)*x
					v[k] = b2*v[k] + (1-b2)*x*x
					R[k] -= o.LearningRate * (m[k] / c1) / (math.Sqrt(v[k]/c2) + eps)
				}
				delete(grads, id)
			}
		}
		res.Cosine = fit()
		logf("distill: epoch %d: loss %.4f, held-out cosine %s", ep, loss/float64(len(train)), fmtCos(res.Cosine))
	}
	for i, x := range R {
		table[i] = float32(x)
	}
	res.Model, err = model2vec.New(model2vec.Parts{
		Embeddings: table, Rows: V, Dim: D, Tokenizer: o.Tokenizer,
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

func norm(v []float64) float64 {
	s := 0.0
	for _, x := range v {
		s += x * x
	}
	return math.Sqrt(s)
}

// unit scales v to unit length and returns its former norm.
func unit(v []float64) float64 {
	n := norm(v)
	if n > 0 {
		for i := range v {
			v[i] /= n
		}
	}
	return n
}

func cosine(a, b []float64) float64 {
	na, nb := norm(a), norm(b)
	if na == 0 || nb == 0 {
		return 0
	}
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s / (na * nb)
}

// CorpusTexts returns the distillation corpus of a training corpus: every
// tool's document and every query, each cut by train.TeacherText, without
// duplicates, in the corpus' order (tools first).
func CorpusTexts(c *train.Corpus) []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		s = train.TeacherText(s)
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
