package train

import (
	"context"

	"github.com/toolrag/mcp-gateway/pkg/embed"
)

// lexical holds the hashing embedder's vectors (embed.NewHashing: stemmed
// words and character n-grams) of every training text when
// Options.HashWeight is positive. The model is then trained as the
// residual over them: a query–document score is the cosine of the fused
// embedding that embed.NewBuiltinWith(BuiltinConfig{HashWeight: w}) serves,
//
//	(cos_model + w²·cos_hash) / (1 + w²),
//
// so the table learns what the lexical features miss instead of
// duplicating what they already match.
type lexical struct {
	a, b    float32     // weights of the model and the hashing cosine
	docs    [][]float32 // per document, unit length (dense: few, scored often)
	queries []sparseVec // per training pair
	val     []sparseVec // per validation pair
}

// sparseVec is a mostly-zero vector: a query has a few dozen features.
type sparseVec struct {
	idx []uint16
	val []float32
}

func sparsify(v []float32) sparseVec {
	var s sparseVec
	for i, x := range v {
		if x != 0 {
			s.idx = append(s.idx, uint16(i))
			s.val = append(s.val, x)
		}
	}
	return s
}

func (s sparseVec) dot(d []float32) float32 {
	var sum float32
	for k, i := range s.idx {
		sum += s.val[k] * d[i]
	}
	return sum
}

func newLexical(w float64, threads int, docs []string, pairs, val []Pair) *lexical {
	h := embed.NewHashing()
	vec := func(text string) []float32 {
		v, _ := h.EmbedQuery(context.Background(), text) // never fails with a live context
		return v
	}
	lx := &lexical{
		a: float32(1 / (1 + w*w)), b: float32(w * w / (1 + w*w)),
		docs: make([][]float32, len(docs)), queries: make([]sparseVec, len(pairs)), val: make([]sparseVec, len(val)),
	}
	parallel(threads, len(docs), func(i int) { lx.docs[i] = vec(docs[i]) })
	parallel(threads, len(pairs), func(i int) { lx.queries[i] = sparsify(vec(pairs[i].Query)) })
	parallel(threads, len(val), func(i int) { lx.val[i] = sparsify(vec(val[i].Query)) })
	return lx
}
