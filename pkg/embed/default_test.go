package embed

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/embed/toolmodel"
)

// handModel is a StaticModel with hand-made vectors.
type handModel struct {
	vecs map[string][]float32
	dim  int
}

func (m handModel) Embed(text string) []float32 {
	v := make([]float32, m.dim)
	copy(v, m.vecs[text])
	return v
}
func (m handModel) Dim() int   { return m.dim }
func (m handModel) ID() string { return "model2vec:fixed" }

func cos(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestBuiltinUsesTheShippedModel(t *testing.T) {
	if _, err := NewBuiltinWith(BuiltinConfig{}); err != nil {
		t.Fatalf("the built-in model did not load: %v", err)
	}
	e := NewBuiltin()
	m, err := toolmodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	wantDim := m.Dim()
	if DefaultHashWeight > 0 {
		wantDim += BuiltinDim
	}
	if e.Dim() != wantDim || !strings.HasPrefix(e.ModelID(), "builtin-"+m.ID()) || strings.Contains(e.ModelID(), "distilled") {
		t.Fatalf("NewBuiltin: dim %d id %q; want dim %d and an id naming %s (and no distilled table)", e.Dim(), e.ModelID(), wantDim, m.ID())
	}
	if e.ModelID() == NewHashing().ModelID() {
		t.Fatal("the builtin embedder must not share the hashing embedder's ModelID")
	}
	// The model was trained next to the hashing features at one weight
	// (lab/train Options.HashWeight); serving it at another is a mismatch.
	if hw := m.Metadata()["hash_weight"]; hw != strconv.FormatFloat(DefaultHashWeight, 'g', -1, 64) {
		t.Errorf("the shipped model was trained with hash weight %q; DefaultHashWeight is %v", hw, DefaultHashWeight)
	}
	if NewBuiltin() != e {
		t.Error("NewBuiltin should load the model once and share it")
	}
	ctx := context.Background()
	docs, err := e.EmbedDocuments(ctx, []string{
		"get forecast\nGet the weather forecast for a city",
		"send email\nSend an email message to a recipient",
		"",
	})
	if err != nil {
		t.Fatal(err)
	}
	q, err := e.EmbedQuery(ctx, "will it rain in Paris tomorrow")
	if err != nil {
		t.Fatal(err)
	}
	if n := norm(docs[0]); math.Abs(n-1) > 1e-5 {
		t.Errorf("document norm %v", n)
	}
	if n := norm(docs[2]); n != 0 {
		t.Errorf("blank document: norm %v, want the zero vector", n)
	}
	if cos(q, docs[0]) <= cos(q, docs[1]) {
		t.Errorf("weather query: cos(forecast) %.3f <= cos(email) %.3f", cos(q, docs[0]), cos(q, docs[1]))
	}
}

func TestFusedCosine(t *testing.T) {
	m := handModel{dim: 2, vecs: map[string][]float32{
		"read file":  {1, 0},
		"open file":  {0.6, 0.8},
		"send email": {0, 3}, // not unit: the embedder normalises
	}}
	ctx := context.Background()
	for _, w := range []float64{-1, 0.5, 1, 2} {
		e, err := NewBuiltinWith(BuiltinConfig{Model: m, HashWeight: w})
		if err != nil {
			t.Fatal(err)
		}
		h := NewHashing()
		a, _ := e.EmbedQuery(ctx, "read file")
		b, _ := e.EmbedQuery(ctx, "open file")
		ha, _ := h.EmbedQuery(ctx, "read file")
		hb, _ := h.EmbedQuery(ctx, "open file")
		want := 0.6
		if w > 0 {
			want = (0.6 + w*w*cos(ha, hb)) / (1 + w*w)
		}
		if got := cos(a, b); math.Abs(got-want) > 1e-5 {
			t.Errorf("hash weight %v: cosine %.5f, want %.5f", w, got, want)
		}
		if wantDim := map[bool]int{true: 2 + BuiltinDim, false: 2}[w > 0]; e.Dim() != wantDim || len(a) != wantDim {
			t.Errorf("hash weight %v: dim %d (vector %d), want %d", w, e.Dim(), len(a), wantDim)
		}
		v, _ := e.EmbedQuery(ctx, "send email")
		if n := norm(v); math.Abs(n-1) > 1e-5 {
			t.Errorf("hash weight %v: norm %v", w, n)
		}
	}
	e1, _ := NewBuiltinWith(BuiltinConfig{Model: m, HashWeight: 1})
	e2, _ := NewBuiltinWith(BuiltinConfig{Model: m, HashWeight: 2})
	e0, _ := NewBuiltinWith(BuiltinConfig{Model: m, HashWeight: -1})
	if e1.ModelID() == e2.ModelID() || e1.ModelID() == e0.ModelID() {
		t.Errorf("ModelIDs must differ by hash weight: %q %q %q", e0.ModelID(), e1.ModelID(), e2.ModelID())
	}
	if _, err := e1.EmbedDocuments(cancelled(), []string{"a"}); err == nil {
		t.Error("cancelled context: want an error")
	}
}

func cancelled() context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	return ctx
}

func TestBuiltinFallsBackToHashing(t *testing.T) {
	old := loadBuiltinModel
	defer func() { loadBuiltinModel = old }()
	loadBuiltinModel = func() (StaticModel, error) { return nil, errors.New("corrupt model") }
	e, err := builtinOrHashing(BuiltinConfig{})
	if err == nil || !strings.Contains(err.Error(), "corrupt model") {
		t.Fatalf("err = %v, want the load error", err)
	}
	if e == nil || e.ModelID() != NewHashing().ModelID() {
		t.Fatalf("fallback embedder %v, want the hashing embedder", e)
	}
	if _, err := NewBuiltinWith(BuiltinConfig{Model: handModel{dim: 0}}); err == nil {
		t.Error("a model of dimension 0: want an error")
	}
}

// BenchmarkBuiltinQuery is the query-embedding cost of the default builtin
// embedder (target: well under 1 ms).
func BenchmarkBuiltinQuery(b *testing.B) {
	e := NewBuiltin()
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.EmbedQuery(ctx, "find the weather forecast for Paris tomorrow and send it to my team by email"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBuiltinEmbedDocs10k embeds 10,000 generated tool documents.
func BenchmarkBuiltinEmbedDocs10k(b *testing.B) {
	docs := syntheticTools(10000)
	e := NewBuiltin()
	ctx := context.Background()
	for b.Loop() {
		if _, err := e.EmbedDocuments(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkModelLoad is the cold-start cost of parsing the built-in model
// from the binary (toolmodel.Load does it once per process).
func BenchmarkModelLoad(b *testing.B) {
	for b.Loop() {
		if _, err := model2vec.LoadFS(toolmodel.FS()); err != nil {
			b.Fatal(err)
		}
	}
}

// TestDistilledPart checks the three-part vector: the cosine is the
// weighted mean of the parts' cosines, a negative weight leaves the part
// out, and the ModelID names the part and its weight.
func TestDistilledPart(t *testing.T) {
	m := handModel{dim: 2, vecs: map[string][]float32{"read file": {1, 0}, "open file": {0.6, 0.8}}}
	d := handModel{dim: 2, vecs: map[string][]float32{"read file": {0, 2}, "open file": {1, 1}}}
	ctx := context.Background()
	h := NewHashing()
	ha, _ := h.EmbedQuery(ctx, "read file")
	hb, _ := h.EmbedQuery(ctx, "open file")
	cd := 1 / math.Sqrt2
	for _, dw := range []float64{-1, 0.5, 1, 2} {
		e, err := NewBuiltinWith(BuiltinConfig{Model: m, Distilled: d, DistilledWeight: dw})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := e.EmbedQuery(ctx, "read file")
		b, _ := e.EmbedQuery(ctx, "open file")
		w := DefaultHashWeight
		want := (0.6 + w*w*cos(ha, hb)) / (1 + w*w)
		wantDim := 2 + BuiltinDim
		if dw > 0 {
			want = (0.6 + w*w*cos(ha, hb) + dw*dw*cd) / (1 + w*w + dw*dw)
			wantDim += 2
		}
		if got := cos(a, b); math.Abs(got-want) > 1e-5 {
			t.Errorf("distilled weight %v: cosine %.5f, want %.5f", dw, got, want)
		}
		if e.Dim() != wantDim || len(a) != wantDim {
			t.Errorf("distilled weight %v: dim %d (vector %d), want %d", dw, e.Dim(), len(a), wantDim)
		}
		if has := strings.Contains(e.ModelID(), "+distilled-model2vec:fixed*"); has != (dw > 0) {
			t.Errorf("distilled weight %v: ModelID %q", dw, e.ModelID())
		}
	}
	// No distilled part unless one is given.
	e, _ := NewBuiltinWith(BuiltinConfig{Model: m})
	if e.Dim() != 2+BuiltinDim {
		t.Errorf("no distilled table: dim %d, want %d", e.Dim(), 2+BuiltinDim)
	}
	if _, err := NewBuiltinWith(BuiltinConfig{Model: m, Distilled: handModel{dim: 0}}); err == nil {
		t.Error("a distilled table of dimension 0: want an error")
	}
}
