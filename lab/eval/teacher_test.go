package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/toolrag/mcp-gateway/lab/train"
	"github.com/toolrag/mcp-gateway/pkg/embed"
)

// Embedders for measuring a sentence encoder that only runs outside Go
// (docs/retrieval.md, "Fifth pass"): "record:<file>" is the default
// embedder that also writes every text it embeds (one JSON string per
// line, the input of lab/teacher/embed.js), and
// "teacher:<w>:<vectors file>" appends the encoder's vector of each text
// (looked up in the file embed.js wrote) at weight w to the default's.

type textRecorder struct {
	embed.Embedder
	mu   sync.Mutex
	f    *os.File
	seen map[string]bool
}

func (r *textRecorder) record(texts ...string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range texts {
		if r.seen[t] {
			continue
		}
		r.seen[t] = true
		b, _ := json.Marshal(t)
		if _, err := r.f.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

func (r *textRecorder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	if err := r.record(texts...); err != nil {
		return nil, err
	}
	return r.Embedder.EmbedDocuments(ctx, texts)
}

func (r *textRecorder) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := r.record(text); err != nil {
		return nil, err
	}
	return r.Embedder.EmbedQuery(ctx, text)
}

type appendedTeacher struct {
	base embed.Embedder
	vecs map[string][]float32
	w    float64
	dim  int
}

func (a *appendedTeacher) Dim() int { return a.base.Dim() + a.dim }
func (a *appendedTeacher) ModelID() string {
	return fmt.Sprintf("%s+teacher*%g", a.base.ModelID(), a.w)
}

func (a *appendedTeacher) join(text string, v []float32) ([]float32, error) {
	tv, ok := a.vecs[text]
	if !ok {
		return nil, fmt.Errorf("the teacher's vectors file has no vector for %.60q (record the texts again)", text)
	}
	out := make([]float32, 0, len(v)+len(tv))
	out = append(out, v...)
	var n float64
	for _, x := range tv {
		n += float64(x) * float64(x)
	}
	scale := a.w / math.Max(math.Sqrt(n), 1e-12)
	for _, x := range tv {
		out = append(out, float32(float64(x)*scale))
	}
	inv := 1 / math.Sqrt(1+a.w*a.w) // v is a unit vector
	for i := range out {
		out[i] = float32(float64(out[i]) * inv)
	}
	return out, nil
}

func (a *appendedTeacher) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := a.base.EmbedDocuments(ctx, texts)
	if err != nil {
		return nil, err
	}
	for i := range vs {
		if vs[i], err = a.join(texts[i], vs[i]); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

func (a *appendedTeacher) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	v, err := a.base.EmbedQuery(ctx, text)
	if err != nil {
		return nil, err
	}
	return a.join(text, v)
}

// outsideEmbedder parses the record: and teacher: specs (ok false for
// any other spec).
func outsideEmbedder(t *testing.T, spec string) (embed.Embedder, bool) {
	t.Helper()
	if path, ok := strings.CutPrefix(spec, "record:"); ok {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return &textRecorder{Embedder: embed.NewBuiltin(), f: f, seen: map[string]bool{}}, true
	}
	rest, ok := strings.CutPrefix(spec, "teacher:")
	if !ok {
		return nil, false
	}
	ws, path, _ := strings.Cut(rest, ":")
	w, err := strconv.ParseFloat(ws, 64)
	if err != nil {
		t.Fatalf("-eval.json: teacher weight: %v", err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	texts, vecs, err := train.ReadTeacherVectors(f)
	if err != nil {
		t.Fatal(err)
	}
	a := &appendedTeacher{base: embed.NewBuiltin(), vecs: make(map[string][]float32, len(texts)), w: w}
	for i, s := range texts {
		a.vecs[s] = vecs[i]
		a.dim = len(vecs[i])
	}
	return a, true
}

// TestAppendedTeacher: the appended vector is a unit vector whose cosine
// mixes the two parts as (cos_base + w²·cos_teacher)/(1 + w²).
func TestAppendedTeacher(t *testing.T) {
	a := &appendedTeacher{base: embed.NewHashing(), w: 0.5, dim: 2,
		vecs: map[string][]float32{"send an email": {3, 4}, "mail a message": {4, 3}}}
	ctx := context.Background()
	q, err := a.EmbedQuery(ctx, "send an email")
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.EmbedDocuments(ctx, []string{"mail a message"})
	if err != nil {
		t.Fatal(err)
	}
	bq, _ := a.base.EmbedQuery(ctx, "send an email")
	bd, _ := a.base.EmbedDocuments(ctx, []string{"mail a message"})
	dot := func(x, y []float32) (s float64) {
		for i := range x {
			s += float64(x[i]) * float64(y[i])
		}
		return s
	}
	want := (dot(bq, bd[0]) + 0.25*0.96) / 1.25
	if got := dot(q, d[0]); math.Abs(got-want) > 1e-5 || math.Abs(dot(q, q)-1) > 1e-5 || len(q) != a.Dim() {
		t.Fatalf("cosine %.5f (want %.5f), |q|² %.5f, dim %d/%d", got, want, dot(q, q), len(q), a.Dim())
	}
	if _, err := a.EmbedQuery(ctx, "unknown text"); err == nil || !strings.Contains(err.Error(), "no vector") {
		t.Fatalf("a text without a teacher vector: %v", err)
	}
}
