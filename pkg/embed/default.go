package embed

import (
	"fmt"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/embed/toolmodel"
	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// DefaultHashWeight is the weight of the hashing features next to the
// built-in model in the default builtin embedder (the model's weight is 1).
// The shipped model was trained as the residual over these features at
// this weight (lab/train Options.HashWeight; its metadata says
// "hash_weight"), so the two belong together. Chosen on the DEV sets
// (docs/retrieval.md): better than the model alone on both, at 1,536
// instead of 512 dimensions per vector.
const DefaultHashWeight = 0.5

// DefaultDistilledWeight is the weight of a distilled table
// (BuiltinConfig.Distilled: a static student of a sentence encoder, made by
// lab/train) when none is given. The default builtin embedder has no
// distilled table (docs/retrieval.md, "Fifth pass").
const DefaultDistilledWeight = 1.0

// BuiltinConfig configures NewBuiltinWith.
type BuiltinConfig struct {
	// Model is the static model (nil: the built-in toolmodel.Load()).
	Model StaticModel
	// HashWeight is the weight of the hashing features (NewHashing)
	// concatenated after the model vector, whose weight is 1. Zero means
	// DefaultHashWeight; a negative value means none.
	HashWeight float64
	// Distilled is an optional second static table (lab/train) whose
	// vector is appended last, at DistilledWeight; nil: none.
	Distilled StaticModel
	// DistilledWeight: zero means DefaultDistilledWeight; a negative value
	// means no distilled part.
	DistilledWeight float64
}

var (
	builtinOnce sync.Once
	builtinEmb  Embedder
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
// tool-retrieval model (pkg/embed/toolmodel), fused with the hashing features as
// DefaultHashWeight says. The model is loaded once per process. When it
// cannot be loaded, NewBuiltin falls back to the hashing embedder
// (NewHashing); NewBuiltinWith reports why.
func NewBuiltin() Embedder {
	builtinOnce.Do(func() { builtinEmb, _ = builtinOrHashing(BuiltinConfig{}) })
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

// NewBuiltinWith returns the builtin embedder over cfg.Model (or the
// built-in model): the model's vector, the hashing features at the hash
// weight and cfg.Distilled's vector at its weight (each part unit
// length before weighting; a part of weight ≤ 0 is left out), the whole
// L2-normalised. The cosine of two such vectors is
// (cos_model + w²·cos_hash + d²·cos_distilled)/(1 + w² + d²).
func NewBuiltinWith(cfg BuiltinConfig) (Embedder, error) {
	m, d := cfg.Model, cfg.Distilled
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
	f := &fused{m: m}
	f.inProcess = f.embed
	if w > 0 {
		f.h, f.w = NewHashing().(*builtin), float32(w)
	}
	dw := cfg.DistilledWeight
	if dw == 0 {
		dw = DefaultDistilledWeight
	}
	if d != nil && dw > 0 {
		if d.Dim() <= 0 {
			return nil, fmt.Errorf("embed: the distilled table has dimension %d", d.Dim())
		}
		f.d, f.dw = d, float32(dw)
	}
	return f, nil
}

// fused is the model vector, optionally followed by weighted hashing
// features and a weighted distilled vector.
type fused struct {
	inProcess
	m  StaticModel
	h  *builtin // nil: no hashing features
	w  float32
	d  StaticModel // nil: no distilled part
	dw float32
}

func (f *fused) Dim() int {
	n := f.m.Dim()
	if f.h != nil {
		n += BuiltinDim
	}
	if f.d != nil {
		n += f.d.Dim()
	}
	return n
}

func (f *fused) ModelID() string {
	id := "builtin-" + f.m.ID()
	if f.h != nil {
		id += fmt.Sprintf("+%s*%g", f.h.ModelID(), f.w)
	}
	if f.d != nil {
		id += fmt.Sprintf("+distilled-%s*%g", f.d.ID(), f.dw)
	}
	return id
}

func (f *fused) embed(text string) []float32 {
	out := make([]float32, f.Dim())
	n := f.m.Dim()
	copy(out, f.m.Embed(text))
	vindex.Normalize(out[:n])
	if f.h != nil {
		for i, x := range f.h.embed(text) {
			out[n+i] = f.w * x
		}
		n += BuiltinDim
	}
	if f.d != nil {
		part := out[n : n+f.d.Dim()]
		copy(part, f.d.Embed(text))
		vindex.Normalize(part)
		for i := range part {
			part[i] *= f.dw
		}
	}
	vindex.Normalize(out)
	return out
}
