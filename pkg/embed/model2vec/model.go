// Package model2vec loads, runs and writes static embedding models in the
// Model2Vec format: a directory holding model.safetensors (the token
// embedding table), tokenizer.json (a Hugging Face WordPiece tokenizer) and
// config.json.
//
// A text embedding is computed the way the Python model2vec library does it:
// tokenize without special tokens, drop unknown tokens, keep the first 512
// tokens, look up one row per token (through the optional "mapping" tensor),
// scale it by the optional per-token "weights", average, and L2-normalise
// when config.normalize is true (the default here when the key is absent).
//
// Supported tensor dtypes for "embeddings" are F32, F16, BF16, F64 and I8.
// I8 values are used as they are, multiplied by "weights" when present. Save
// with dtype I8 quantises every row symmetrically with its own scale
// (max |x| / 127) and folds that scale into "weights" (weights[token] =
// original weight × scale of the token's row), so any model2vec reader
// reproduces the float model up to rounding. Files written by the Python
// library with a single global int8 scale (which it does not store) load as
// well: with normalize=true a global scale has no effect on the result.
package model2vec

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"

	"github.com/toolrag/mcp-gateway/pkg/index/vindex"
)

// File names of a model directory.
const (
	SafetensorsFile = "model.safetensors"
	TokenizerFile   = "tokenizer.json"
	ConfigFile      = "config.json"
)

// DefaultMaxTokens is the number of tokens kept per text.
const DefaultMaxTokens = 512

// DType selects the storage type of the embedding table written by Save.
type DType string

// Embedding table storage types.
const (
	F32 DType = "f32"
	F16 DType = "f16"
	I8  DType = "i8"
)

// Model is a loaded static embedding model. It is safe for concurrent use.
type Model struct {
	tok       *Tokenizer
	emb       []float32 // rows × dim
	rows, dim int
	weights   []float32 // per token id, or nil
	mapping   []int32   // token id -> row, or nil
	normalize bool
	maxTokens int
	id        string
	meta      map[string]string

	tokJSON []byte
	cfg     map[string]any
}

// Parts are the pieces of a model built in memory (by a trainer).
type Parts struct {
	// Embeddings is the row-major table, Rows × Dim.
	Embeddings []float32
	Rows, Dim  int
	// Weights optionally scales each token id's row (len = vocabulary size).
	Weights []float32
	// Mapping optionally maps each token id to a row (len = vocabulary size).
	Mapping []int32
	// Tokenizer is a tokenizer.json document.
	Tokenizer []byte
	// Config is written to config.json; model_type, hidden_dim and
	// normalize are filled in when missing.
	Config map[string]any
	// Metadata goes to the safetensors __metadata__ header.
	Metadata map[string]string
}

// LoadDir loads a model directory.
func LoadDir(dir string) (*Model, error) {
	m, err := LoadFS(os.DirFS(dir))
	if err != nil {
		return nil, fmt.Errorf("model2vec: load %s: %w", dir, errors.Unwrap(err))
	}
	return m, nil
}

// LoadFS loads a model from the root of fsys. The sentence-transformers
// layout (0_StaticEmbedding/ with tensor "embedding.weight") is accepted too.
func LoadFS(fsys fs.FS) (*Model, error) {
	prefix := ""
	if _, err := fs.Stat(fsys, SafetensorsFile); err != nil {
		if _, err2 := fs.Stat(fsys, "0_StaticEmbedding/"+SafetensorsFile); err2 == nil {
			prefix = "0_StaticEmbedding/"
		}
	}
	st, err := fs.ReadFile(fsys, prefix+SafetensorsFile)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	tj, err := fs.ReadFile(fsys, prefix+TokenizerFile)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	cj, err := fs.ReadFile(fsys, ConfigFile)
	if err != nil && prefix != "" {
		cj, err = fs.ReadFile(fsys, prefix+ConfigFile)
	}
	if errors.Is(err, fs.ErrNotExist) {
		cj, err = []byte("{}"), nil
	}
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	m, err := load(st, tj, cj)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	return m, nil
}

func load(st, tj, cj []byte) (*Model, error) {
	tensors, meta, err := parseSafetensors(st)
	if err != nil {
		return nil, err
	}
	var cfg map[string]any
	if err := json.Unmarshal(cj, &cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", ConfigFile, err)
	}
	if cfg == nil {
		cfg = map[string]any{}
	}
	tok, err := ParseTokenizer(tj)
	if err != nil {
		return nil, err
	}
	et, ok := tensors["embeddings"]
	if !ok {
		et, ok = tensors["embedding.weight"]
	}
	if !ok {
		return nil, errors.New(SafetensorsFile + ` has no "embeddings" tensor`)
	}
	if len(et.Shape) != 2 || et.Shape[0] == 0 || et.Shape[1] == 0 {
		return nil, fmt.Errorf(`tensor "embeddings" must have shape [rows, dim] with both > 0, has %v`, et.Shape)
	}
	emb, err := et.floats()
	if err != nil {
		return nil, fmt.Errorf(`tensor "embeddings": %w`, err)
	}
	p := Parts{Embeddings: emb, Rows: et.Shape[0], Dim: et.Shape[1], Tokenizer: tj, Config: cfg, Metadata: meta}
	if wt, ok := tensors["weights"]; ok {
		if p.Weights, err = wt.floats(); err != nil {
			return nil, fmt.Errorf(`tensor "weights": %w`, err)
		}
		if len(wt.Shape) != 1 && !(len(wt.Shape) == 2 && wt.Shape[1] == 1) {
			return nil, fmt.Errorf(`tensor "weights" must have shape [vocab], has %v`, wt.Shape)
		}
	}
	if mt, ok := tensors["mapping"]; ok {
		if len(mt.Shape) != 1 {
			return nil, fmt.Errorf(`tensor "mapping" must have shape [vocab], has %v`, mt.Shape)
		}
		ids, err := mt.ints()
		if err != nil {
			return nil, fmt.Errorf(`tensor "mapping": %w`, err)
		}
		p.Mapping = make([]int32, len(ids))
		for i, v := range ids {
			if v < 0 || v >= int64(p.Rows) {
				return nil, fmt.Errorf(`tensor "mapping": token %d maps to row %d, outside [0, %d)`, i, v, p.Rows)
			}
			p.Mapping[i] = int32(v)
		}
	}
	m, err := build(p, tok)
	if err != nil {
		return nil, err
	}
	m.id = modelID(st, tj, cj)
	return m, nil
}

// New builds a model from in-memory parts.
func New(p Parts) (*Model, error) {
	tok, err := ParseTokenizer(p.Tokenizer)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	emb := make([]float32, len(p.Embeddings))
	copy(emb, p.Embeddings)
	p.Embeddings = emb
	p.Weights = append([]float32(nil), p.Weights...)
	p.Mapping = append([]int32(nil), p.Mapping...)
	cfg := make(map[string]any, len(p.Config)+3)
	for k, v := range p.Config {
		cfg[k] = v
	}
	p.Config = cfg
	m, err := build(p, tok)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	st, tj, cj, err := m.files(F32)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	m.id = modelID(st, tj, cj)
	return m, nil
}

func build(p Parts, tok *Tokenizer) (*Model, error) {
	if p.Rows <= 0 || p.Dim <= 0 || len(p.Embeddings) != p.Rows*p.Dim {
		return nil, fmt.Errorf("embedding table has %d values, want rows %d × dim %d (both > 0)", len(p.Embeddings), p.Rows, p.Dim)
	}
	for i, v := range p.Embeddings {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("embedding table value %d (row %d) is %v", i, i/p.Dim, v)
		}
	}
	vocab := p.Rows
	if len(p.Mapping) > 0 {
		vocab = len(p.Mapping)
		for i, r := range p.Mapping {
			if r < 0 || int(r) >= p.Rows {
				return nil, fmt.Errorf("mapping: token %d maps to row %d, outside [0, %d)", i, r, p.Rows)
			}
		}
	} else {
		p.Mapping = nil
	}
	if len(p.Weights) > 0 {
		if len(p.Weights) != vocab {
			return nil, fmt.Errorf("weights has %d entries, want one per token (%d)", len(p.Weights), vocab)
		}
		for i, w := range p.Weights {
			if math.IsNaN(float64(w)) || math.IsInf(float64(w), 0) {
				return nil, fmt.Errorf("weight of token %d is %v", i, w)
			}
		}
	} else {
		p.Weights = nil
	}
	if tok.VocabSize() > vocab {
		return nil, fmt.Errorf("tokenizer has %d tokens but the model has only %d (rows or mapping entries)", tok.VocabSize(), vocab)
	}
	if p.Config == nil {
		p.Config = map[string]any{}
	}
	if _, ok := p.Config["model_type"]; !ok {
		p.Config["model_type"] = "model2vec"
	}
	p.Config["hidden_dim"] = p.Dim
	normalize := true
	switch v := p.Config["normalize"].(type) {
	case bool:
		normalize = v
	case nil:
		p.Config["normalize"] = true
	default:
		return nil, fmt.Errorf("%s: normalize must be true or false, is %v", ConfigFile, v)
	}
	return &Model{
		tok: tok, emb: p.Embeddings, rows: p.Rows, dim: p.Dim,
		weights: p.Weights, mapping: p.Mapping, normalize: normalize,
		maxTokens: DefaultMaxTokens, meta: p.Metadata, tokJSON: p.Tokenizer, cfg: p.Config,
	}, nil
}

// modelID hashes the three files (length-prefixed) into a short stable id.
func modelID(st, tj, cj []byte) string {
	h := sha256.New()
	var n [8]byte
	for _, b := range [][]byte{st, tj, cj} {
		binary.LittleEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return "model2vec:" + hex.EncodeToString(h.Sum(nil))[:16]
}

// Dim returns the embedding dimension.
func (m *Model) Dim() int { return m.dim }

// ID identifies the model: "model2vec:" and the first 16 hex digits of the
// SHA-256 of its three files. Models built with New hash the files Save
// would write with F32.
func (m *Model) ID() string { return m.id }

// Normalize reports whether embeddings are L2-normalised.
func (m *Model) Normalize() bool { return m.normalize }

// Tokenizer returns the model's tokenizer.
func (m *Model) Tokenizer() *Tokenizer { return m.tok }

// Metadata returns the safetensors __metadata__ entries (nil when none).
func (m *Model) Metadata() map[string]string { return m.meta }

// Tokens returns the ids Embed uses for text: no special tokens, unknown
// tokens dropped, at most 512.
func (m *Model) Tokens(text string) []int {
	return m.tok.encode(text, nil, m.maxTokens, true)
}

// Embed returns the embedding of text. A text without any known token gets
// the zero vector.
func (m *Model) Embed(text string) []float32 {
	out := make([]float32, m.dim)
	var idsBuf [128]int
	ids := m.tok.encode(text, idsBuf[:0], m.maxTokens, true)
	m.pool(ids, out)
	return out
}

// EmbedTokens embeds an already tokenized text (ids from Tokens).
func (m *Model) EmbedTokens(ids []int) []float32 {
	out := make([]float32, m.dim)
	m.pool(ids, out)
	return out
}

func (m *Model) pool(ids []int, out []float32) {
	n := 0
	for _, id := range ids {
		row := id
		if m.mapping != nil {
			if id < 0 || id >= len(m.mapping) {
				continue
			}
			row = int(m.mapping[id])
		} else if id < 0 || id >= m.rows {
			continue
		}
		w := float32(1)
		if m.weights != nil {
			w = m.weights[id]
		}
		n++
		r := m.emb[row*m.dim : row*m.dim+m.dim]
		for j, v := range r {
			out[j] += w * v
		}
	}
	if n == 0 {
		return
	}
	if m.normalize {
		vindex.Normalize(out)
		return
	}
	inv := 1 / float32(n)
	for j := range out {
		out[j] *= inv
	}
}

// Save writes model.safetensors, tokenizer.json and config.json into dir
// (created if needed), storing the embedding table as dtype.
func Save(dir string, m *Model, dtype DType) error {
	st, tj, cj, err := m.files(dtype)
	if err != nil {
		return fmt.Errorf("model2vec: save %s: %w", dir, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("model2vec: save: %w", err)
	}
	for _, f := range []struct {
		name string
		data []byte
	}{{SafetensorsFile, st}, {TokenizerFile, tj}, {ConfigFile, cj}} {
		if err := writeFileAtomic(filepath.Join(dir, f.name), f.data); err != nil {
			return fmt.Errorf("model2vec: save: %w", err)
		}
	}
	return nil
}

func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// files serialises the model.
func (m *Model) files(dtype DType) (st, tj, cj []byte, err error) {
	vocab := m.rows
	if m.mapping != nil {
		vocab = len(m.mapping)
	}
	meta := make(map[string]string, len(m.meta)+1)
	for k, v := range m.meta {
		meta[k] = v
	}
	delete(meta, "quantization")
	tensors := map[string]tensor{}
	weights := m.weights
	switch dtype {
	case F32:
		tensors["embeddings"] = f32Tensor(m.emb, m.rows, m.dim)
	case F16:
		tensors["embeddings"] = f16Tensor(m.emb, m.rows, m.dim)
	case I8:
		q, scales := quantizeRows(m.emb, m.rows, m.dim)
		tensors["embeddings"] = tensor{DType: "I8", Shape: []int{m.rows, m.dim}, Data: q}
		w := make([]float32, vocab)
		for id := range w {
			row := id
			if m.mapping != nil {
				row = int(m.mapping[id])
			}
			w[id] = scales[row]
			if weights != nil {
				w[id] *= weights[id]
			}
		}
		weights = w
		meta["quantization"] = "int8: symmetric per-row scale (max|x|/127) folded into weights"
	default:
		return nil, nil, nil, fmt.Errorf("unknown dtype %q (want f32, f16 or i8)", dtype)
	}
	if weights != nil {
		tensors["weights"] = f32Tensor(weights, vocab)
	}
	if m.mapping != nil {
		tensors["mapping"] = i32Tensor(m.mapping, vocab)
	}
	if len(meta) == 0 {
		meta = nil
	}
	if st, err = writeSafetensors(tensors, meta); err != nil {
		return nil, nil, nil, err
	}
	cfg := make(map[string]any, len(m.cfg)+1)
	for k, v := range m.cfg {
		cfg[k] = v
	}
	cfg["embedding_dtype"] = map[DType]string{F32: "float32", F16: "float16", I8: "int8"}[dtype]
	if cj, err = json.MarshalIndent(cfg, "", "  "); err != nil {
		return nil, nil, nil, fmt.Errorf("encode %s: %w", ConfigFile, err)
	}
	cj = append(cj, '\n')
	return st, m.tokJSON, cj, nil
}

// quantizeRows quantises each row to int8 with its own symmetric scale.
func quantizeRows(emb []float32, rows, dim int) ([]byte, []float32) {
	q := make([]byte, len(emb))
	scales := make([]float32, rows)
	for r := 0; r < rows; r++ {
		row := emb[r*dim : r*dim+dim]
		var mx float32
		for _, v := range row {
			if a := float32(math.Abs(float64(v))); a > mx {
				mx = a
			}
		}
		if mx == 0 {
			continue
		}
		s := mx / 127
		scales[r] = s
		for j, v := range row {
			x := math.Round(float64(v / s))
			x = math.Max(-127, math.Min(127, x))
			q[r*dim+j] = byte(int8(x))
		}
	}
	return q, scales
}
