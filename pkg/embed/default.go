package embed

import (
	"context"
	"fmt"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/toolmodel"
)

// DefaultHashWeight is the weight of the hashing features next to the
// built-in model in the default builtin embedder (the model's weight is 1).
// The shipped model was trained as the residual over these features at
// this weight (pkg/train Options.HashWeight; its metadata says
// "hash_weight"), so the two belong together. Chosen on the DEV sets
// (docs/retrieval.md): better than the model alone on both, at 1,536
// instead of 512 dimensions per vector.
const DefaultHashWeight = 0.5

// BuiltinConfig configures NewBuiltinWith.
type BuiltinConfig struct {
	// Model is the static model (nil: the built-in toolmodel.Load()).
	Model StaticModel
	// HashWeight is the weight of the hashing features (NewHashing)
	// concatenated after the model vector, whose weight is 1. Zero means
	// DefaultHashWeight; a negative value means the model alone.
	HashWeight float64
}

var (
	builtinOnce sync.Once
	builtinEmb  Embedder
	builtinErr  error
)

// loadBuiltinModel loads the built-in model (a variable for tests).
var loadBuiltinModel = func() (StaticModel, error) {
	m, err := toolmodel.Load()
	if err != nil {
		return nil, err
	}
	return m, nil
}

// NewBuiltin returns the default offline embedder: the built-in trained
// tool-retrieval model (pkg/toolmodel), fused with the hashing features as
// DefaultHashWeight says. The model is loaded once per process. When it
// cannot be loaded, NewBuiltin falls back to the hashing embedder
// (NewHashing); BuiltinError reports why.
func NewBuiltin() Embedder {
	builtinOnce.Do(func() { builtinEmb, builtinErr = builtinOrHashing(BuiltinConfig{}) })
	return builtinEmb
}

// builtinOrHashing is NewBuiltinWith, or the hashing embedder and the
// error when the model cannot be used.
func builtinOrHashing(cfg BuiltinConfig) (Embedder, error) {
	e, err := NewBuiltinWith(cfg)
	if err != nil {
		return NewHashing(), err
	}
	return e, nil
}

// BuiltinError returns the error that made NewBuiltin fall back to the
// hashing embedder, or nil.
func BuiltinError() error {
	NewBuiltin()
	return builtinErr
}

// NewBuiltinWith returns the builtin embedder over cfg.Model (or the
// built-in model): the model's vector, and when the hash weight is positive
// the hashing features appended with that weight, the whole L2-normalised.
// The cosine of two such vectors is (cos_model + w²·cos_hash)/(1 + w²).
func NewBuiltinWith(cfg BuiltinConfig) (Embedder, error) {
	m := cfg.Model
	if m == nil {
		var err error
		if m, err = loadBuiltinModel(); err != nil {
			return nil, fmt.Errorf("embed: loading the built-in model: %w", err)
		}
	}
	if m.Dim() <= 0 {
		return nil, fmt.Errorf("embed: the built-in model has dimension %d", m.Dim())
	}
	w := cfg.HashWeight
	if w == 0 {
		w = DefaultHashWeight
	}
	if w < 0 {
		w = 0
	}
	f := &fused{m: m, w: float32(w)}
	if w > 0 {
		f.h = NewHashing().(*builtin)
	}
	return f, nil
}

// fused is the model vector, optionally followed by weighted hashing
// features.
type fused struct {
	m StaticModel
	h *builtin // nil: model alone
	w float32
}

func (f *fused) Dim() int {
	if f.h == nil {
		return f.m.Dim()
	}
	return f.m.Dim() + BuiltinDim
}

func (f *fused) ModelID() string {
	id := f.m.ID()
	if f.h == nil {
		return "builtin-" + id
	}
	return fmt.Sprintf("builtin-%s+%s*%g", id, f.h.ModelID(), f.w)
}

func (f *fused) embed(text string) []float32 {
	out := make([]float32, f.Dim())
	mv := f.m.Embed(text)
	copy(out, mv)
	normalize(out[:f.m.Dim()])
	if f.h != nil {
		hv := f.h.embed(text)
		for i, x := range hv {
			out[f.m.Dim()+i] = f.w * x
		}
	}
	normalize(out)
	return out
}

func (f *fused) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return f.embed(text), nil
}

func (f *fused) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	return embedAll(ctx, texts, f.embed)
}
