// Package train trains the gateway's own tool-retrieval embedding model: a
// static token-embedding table in the Model2Vec format (see
// pkg/embed/model2vec), learned contrastively from public (query, tool) pairs.
//
// The recipe: a WordPiece vocabulary pruned to the tokens the training text
// uses; a table initialised from IDF-scaled random vectors plus a truncated
// SVD of the corpus' positive PMI co-occurrence matrix; InfoNCE training with
// in-batch negatives and BM25-mined hard negatives, cosine similarity at a
// fixed temperature, lazy (row-sparse) Adam; model selection on a held-out
// split of the training tools; int8 quantisation of the result. Everything
// is seeded and reproducible: the same Options give the same bytes,
// whatever the number of threads.
//
// Distill trains the same table with the same lazy Adam step to imitate a
// sentence encoder's vectors instead (cosine loss), for a student table
// next to the builtin model; lab/teacher computes the teacher's vectors.
package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// Run trains a model with opts, writes it to opts.OutDir (when set) and logs
// progress to logw.
func Run(ctx context.Context, opts Options, logw io.Writer) error {
	_, err := Train(ctx, opts, logw)
	return err
}

// Train is Run that also returns the model and its figures.
func Train(ctx context.Context, opts Options, logw io.Writer) (*Result, error) {
	if logw == nil {
		logw = io.Discard
	}
	opts.defaults()
	if opts.TrainDir == "" {
		return nil, errors.New("train: TrainDir is required")
	}
	switch opts.DType {
	case model2vec.F32, model2vec.F16, model2vec.I8:
	default:
		return nil, fmt.Errorf("train: dtype %q is not one of f32, f16, i8", opts.DType)
	}
	start := time.Now()
	logf := func(format string, args ...any) {
		fmt.Fprintf(logw, "[%6.1fs] %s\n", time.Since(start).Seconds(), fmt.Sprintf(format, args...))
	}

	baseJSON, err := readBaseTokenizer(ctx, opts.BaseTokenizer)
	if err != nil {
		return nil, err
	}
	base, err := model2vec.ParseTokenizer(baseJSON)
	if err != nil {
		return nil, fmt.Errorf("train: base tokenizer: %w", err)
	}
	corpus, err := LoadCorpus(opts.TrainDir, opts.Exclude, opts.Extra...)
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	trainPairs, valPairs, heldOut := corpus.split(opts.HoldOut, opts.Seed)
	logf("data: %d datasets, %d tools (%d held out), %d training pairs, %d validation pairs",
		len(corpus.Datasets), len(corpus.Tools), len(heldOut), len(trainPairs), len(valPairs))

	docs := make([]string, len(corpus.Tools))
	for i, t := range corpus.Tools {
		docs[i] = t.Document()
	}
	// Vocabulary from training-side text only.
	var vocabText []string
	for i, t := range corpus.Tools {
		if !heldOut[t.ID] {
			vocabText = append(vocabText, docs[i])
		}
	}
	for _, p := range trainPairs {
		vocabText = append(vocabText, p.Query)
	}
	if opts.WordTokens > 0 {
		words, added := addWords(base, vocabText, opts.WordTokens)
		if _, base, err = wordPiece(words, base.Token(base.UnkID())); err != nil {
			return nil, fmt.Errorf("train: vocabulary: adding words: %w", err)
		}
		logf("vocabulary: %d whole words added to the base tokens (min count %d)", added, opts.WordTokens)
	}
	vocab, err := pruneVocab(base, vocabText, opts.MinCount)
	if err != nil {
		return nil, fmt.Errorf("train: vocabulary: %w", err)
	}
	tokJSON, tok, err := wordPiece(vocab, base.Token(base.UnkID()))
	if err != nil {
		return nil, fmt.Errorf("train: vocabulary: %w", err)
	}
	logf("vocabulary: %d of %d base tokens kept (min count %d)", len(vocab), base.VocabSize(), opts.MinCount)
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	if opts.WordNetDir != "" {
		wn, err := loadWordNet(opts.WordNetDir)
		if err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		trainPairs = append(trainPairs, corpus.addAux(wn)...)
		for _, t := range corpus.Tools[len(docs):] {
			docs = append(docs, t.Document())
		}
		logf("wordnet: %d (definition → words) pairs, %d per epoch", len(wn), opts.WordNetPerEpoch)
	}
	tr := newTrainer(opts, corpus, tok, docs, trainPairs, valPairs, heldOut)
	tr.logf = logf
	if opts.Teacher != "" {
		if err := tr.loadTeacher(opts.Teacher, docs); err != nil {
			return nil, err
		}
	}
	tr.init()
	logf("init: %d×%d table (svd part %d dims)", tr.tab.V, tr.tab.D, opts.SVDDim)
	res, err := tr.run(ctx)
	if err != nil {
		return nil, err
	}

	cfg := map[string]any{
		"model_type": "model2vec",
		"normalize":  true,
		"hidden_dim": opts.Dim,
		"tokenizer_name": "bert-base-uncased WordPiece (from sentence-transformers/all-MiniLM-L6-v2), " +
			"pruned to the training text",
		"apply_pca":  nil,
		"apply_zipf": nil,
	}
	meta := map[string]string{
		"format":   "pt",
		"trainer":  "github.com/toolrag/mcp-gateway/lab/train",
		"datasets": strings.Join(corpus.Datasets, ","),
		"seed":     fmt.Sprint(opts.Seed),
		"epochs":   fmt.Sprintf("%d (best %d)", opts.Epochs, res.BestEpoch),
		// The hashing-feature weight the table was trained next to (0: alone).
		"hash_weight": strconv.FormatFloat(opts.HashWeight, 'g', -1, 64),
	}
	m, err := model2vec.New(model2vec.Parts{
		Embeddings: tr.best, Rows: tr.tab.V, Dim: tr.tab.D,
		Tokenizer: tokJSON, Config: cfg, Metadata: meta,
	})
	if err != nil {
		return nil, fmt.Errorf("train: %w", err)
	}
	if opts.OutDir != "" {
		if err := model2vec.Save(opts.OutDir, m, opts.DType); err != nil {
			return nil, fmt.Errorf("train: %w", err)
		}
		saved, err := model2vec.LoadDir(opts.OutDir)
		if err != nil {
			return nil, fmt.Errorf("train: reload: %w", err)
		}
		sq, sd := tr.sampleTexts(200, 300)
		res.QuantMaxErr, res.QuantMeanErr = cosineDrift(m, saved, sq, sd)
		logf("wrote %s (%s, id %s); query-document cosine change from quantisation: max %.2g, mean %.2g",
			opts.OutDir, opts.DType, saved.ID(), res.QuantMaxErr, res.QuantMeanErr)
		m = saved
	}
	res.Model = m
	res.Vocab = len(vocab)
	return res, nil
}

// readBaseTokenizer reads path, or locates the base tokenizer in the Go
// module cache.
func readBaseTokenizer(ctx context.Context, path string) ([]byte, error) {
	if path == "" {
		cmd := exec.CommandContext(ctx, "go", "mod", "download", "-json", BaseTokenizerModule)
		cmd.Dir = os.TempDir() // outside any module: never touches go.mod
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("train: locate the base tokenizer with `go mod download -json %s`: %w (set BaseTokenizer to a tokenizer.json instead)", BaseTokenizerModule, err)
		}
		dir := ""
		for _, line := range strings.Split(string(out), "\n") {
			line = strings.TrimSpace(line)
			if v, ok := strings.CutPrefix(line, `"Dir": "`); ok {
				dir = strings.TrimSuffix(strings.TrimSuffix(v, ","), `"`)
			}
		}
		if dir == "" {
			return nil, fmt.Errorf("train: `go mod download -json %s` gave no Dir", BaseTokenizerModule)
		}
		path = filepath.Join(dir, baseTokenizerPath)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("train: base tokenizer: %w", err)
	}
	return b, nil
}
