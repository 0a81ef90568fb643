// Package train trains the gateway's own tool-retrieval embedding model: a
// static token-embedding table in the Model2Vec format (see
// pkg/model2vec), learned contrastively from public (query, tool) pairs.
//
// The recipe: a WordPiece vocabulary pruned to the tokens the training text
// uses; a table initialised from IDF-scaled random vectors plus a truncated
// SVD of the corpus' positive PMI co-occurrence matrix; InfoNCE training with
// in-batch negatives and BM25-mined hard negatives, cosine similarity at a
// fixed temperature, lazy (row-sparse) Adam; model selection on a held-out
// split of the training tools; int8 quantisation of the result. Everything
// is seeded and reproducible: the same Options give the same bytes,
// whatever the number of threads.
package train

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/model2vec"
)

// BaseTokenizerModule is the Go module whose tokenizer.json (the BERT
// uncased WordPiece vocabulary of all-MiniLM-L6-v2, Apache-2.0) seeds the
// vocabulary. Only that file is read; the module is not imported.
const (
	BaseTokenizerModule = "github.com/clems4ever/all-minilm-l6-v2-go@v0.0.9"
	baseTokenizerPath   = "all_minilm_l6_v2/tokenizer.json"
)

// DevDatasets are the ../shared/train folders kept out of training: their
// tools make the real-MCP DEV catalog (pkg/eval RealMCPDatasets), whose
// servers the model must not have seen. `toolrag train` excludes them
// unless --exclude says otherwise.
var DevDatasets = []string{"docker_mcp_registry", "taubench", "tooltalk"}

// DefaultDatasetWeights returns the weights Options.DatasetWeight takes
// when nil (a fresh map).
func DefaultDatasetWeights() map[string]float64 {
	return map[string]float64{"clinc150": 0.5, "hwu64": 0.5}
}

// Options configure a training run. Zero values take the defaults noted.
type Options struct {
	TrainDir string // folder of datasets (tools.jsonl + pairs.jsonl each); required
	// Extra are more dataset folders (tools.jsonl + pairs.jsonl), each
	// named by its base name: pkg/train/mcpagent in the shipped recipe.
	Extra  []string
	OutDir string // where the model directory is written; empty = do not write
	// BaseTokenizer is a BERT-style tokenizer.json whose vocabulary is
	// pruned to the training text. Empty: the file from BaseTokenizerModule,
	// located (and downloaded if needed) with `go mod download -json`.
	BaseTokenizer string

	Dim           int     // embedding dimension; 512
	Epochs        int     // passes over the (capped) examples; 8
	Seed          uint64  // 1
	Threads       int     // GOMAXPROCS
	BatchSize     int     // examples per step; 256
	LearningRate  float64 // Adam step; 0.01
	Temperature   float64 // softmax temperature over cosines; 0.05
	HardNegatives int     // BM25 negatives per example; 4 (negative: none)
	// OneWay trains only the query → documents direction of the loss; by
	// default the document → queries direction is added (half weight
	// each).
	OneWay   bool
	HardPool int // drawn from the top HardPool BM25 hits; 20
	// ServerNegatives reserves up to this many places of the hard pool of
	// a query whose tool names its server (tools.jsonl "server") for the
	// other tools of that server, best BM25 match first: the siblings an
	// agent must tell apart (list_coupons vs create_coupon); 10
	// (negative: none).
	ServerNegatives int
	MaxPerTool      int // examples per tool and epoch; 24
	// WordNetDir is a WordNet 3.0 database folder (data.noun, ...) whose
	// (definition → synonyms and hypernyms) pairs are mixed into training
	// to teach general word relations; "" means none.
	WordNetDir string
	// WordNetPerEpoch is the number of WordNet pairs drawn per epoch; 6000.
	WordNetPerEpoch int
	HoldOut         float64 // share of labelled tools held out per dataset; 0.1 (negative: none)
	MinCount        int     // minimum uses of a token to keep it; 2
	SVDDim          int     // dimensions of the LSA (SVD) part of the init; Dim/2 (negative: none)
	DType           model2vec.DType
	Exclude         []string // dataset folders to leave out
	// HashWeight trains the table as the residual over the hashing
	// embedder's features at this weight: scores are those of the fused
	// embedding embed.NewBuiltinWith(BuiltinConfig{HashWeight: w}) serves
	// (see lexical). Default 0.5 (embed.DefaultHashWeight); negative: the
	// model alone. The weight is recorded in the model's metadata
	// ("hash_weight").
	HashWeight float64
	// DatasetWeight scales the per-tool cap of a dataset; missing datasets
	// count 1. A weight w > 1 also repeats each example of the dataset
	// round(w) times per epoch (up to the raised cap), so small datasets
	// weigh more. nil means {"clinc150": 0.5, "hwu64": 0.5}: the two
	// intent sets with synthetic descriptions count half.
	DatasetWeight map[string]float64
}

func (o *Options) defaults() {
	if o.Dim <= 0 {
		o.Dim = 512
	}
	if o.Epochs <= 0 {
		o.Epochs = 8
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Threads <= 0 {
		o.Threads = runtime.GOMAXPROCS(0)
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 256
	}
	if o.LearningRate <= 0 {
		o.LearningRate = 0.01
	}
	if o.Temperature <= 0 {
		o.Temperature = 0.05
	}
	if o.HardNegatives < 0 {
		o.HardNegatives = 0
	} else if o.HardNegatives == 0 {
		o.HardNegatives = 4
	}
	if o.HardPool <= 0 {
		o.HardPool = 20
	}
	if o.ServerNegatives == 0 {
		o.ServerNegatives = 10
	} else if o.ServerNegatives < 0 {
		o.ServerNegatives = 0
	}
	o.ServerNegatives = min(o.ServerNegatives, o.HardPool)
	if o.MaxPerTool <= 0 {
		o.MaxPerTool = 24
	}
	if o.WordNetPerEpoch <= 0 {
		o.WordNetPerEpoch = 6000
	}
	if o.HoldOut == 0 {
		o.HoldOut = 0.1
	} else if o.HoldOut < 0 {
		o.HoldOut = 0
	}
	if o.MinCount <= 0 {
		o.MinCount = 3
	}
	if o.DatasetWeight == nil {
		o.DatasetWeight = DefaultDatasetWeights()
	}
	if o.SVDDim == 0 {
		o.SVDDim = o.Dim / 2
	} else if o.SVDDim < 0 {
		o.SVDDim = 0
	}
	if o.SVDDim > o.Dim {
		o.SVDDim = o.Dim
	}
	if o.DType == "" {
		o.DType = model2vec.I8
	}
	if o.HashWeight == 0 {
		o.HashWeight = 0.5
	} else if o.HashWeight < 0 {
		o.HashWeight = 0
	}
}

// Result summarises a training run.
type Result struct {
	Model      *model2vec.Model
	Vocab      int
	BestEpoch  int
	Validation Metrics            // on the held-out tools, best epoch, float table
	PerDataset map[string]Metrics // validation by dataset
	LossStart  float64            // mean loss of the first epoch
	LossEnd    float64            // mean loss of the last epoch
	// QuantMaxErr and QuantMeanErr compare query–document cosines of the
	// saved (quantised) model with the float model (0 when not saved).
	QuantMaxErr, QuantMeanErr float64
}

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
	vocab, err := pruneVocab(base, vocabText, opts.MinCount)
	if err != nil {
		return nil, fmt.Errorf("train: vocabulary: %w", err)
	}
	tokJSON, err := model2vec.WordPieceJSON(vocab, base.Token(base.UnkID()))
	if err != nil {
		return nil, fmt.Errorf("train: vocabulary: %w", err)
	}
	tok, err := model2vec.ParseTokenizer(tokJSON)
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
		"trainer":  "github.com/toolrag/mcp-gateway/pkg/train",
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

// example is one (query, positive tool) training item.
type example struct {
	pair int32 // index into trainer.pairs
	pos  int32 // tool index
}

type trainer struct {
	opts    Options
	corpus  *Corpus
	tok     *model2vec.Tokenizer
	tab     *table
	best    []float32
	logf    func(string, ...any)
	docBags []bag // per tool
	qBags   []bag // per training pair
	pairs   []Pair
	pairPos [][]int32 // tool indexes per training pair
	hard    [][]int32 // BM25 candidates per training pair (same dataset, not positive)
	heldOut map[string]bool
	val     []Pair
	valBags []bag
	shards  []*sparseGrad
	idf     []float64 // per token, over the training texts
	lex     *lexical  // nil unless Options.HashWeight > 0
}

func newTrainer(opts Options, c *Corpus, tok *model2vec.Tokenizer, docs []string, pairs, val []Pair, heldOut map[string]bool) *trainer {
	tr := &trainer{opts: opts, corpus: c, tok: tok, pairs: pairs, val: val, heldOut: heldOut}
	tr.docBags = make([]bag, len(docs))
	parallel(opts.Threads, len(docs), func(i int) { tr.docBags[i] = makeBag(tok.Encode(docs[i])) })
	tr.qBags = make([]bag, len(pairs))
	parallel(opts.Threads, len(pairs), func(i int) { tr.qBags[i] = makeBag(tok.Encode(pairs[i].Query)) })
	tr.valBags = make([]bag, len(val))
	parallel(opts.Threads, len(val), func(i int) { tr.valBags[i] = makeBag(tok.Encode(val[i].Query)) })
	tr.pairPos = make([][]int32, len(pairs))
	for i, p := range pairs {
		for _, id := range p.ToolIDs {
			tr.pairPos[i] = append(tr.pairPos[i], int32(c.byID[id]))
		}
	}
	tr.mineHard()
	if opts.HashWeight > 0 {
		tr.lex = newLexical(opts.HashWeight, opts.Threads, docs, pairs, val)
	}
	return tr
}

// mineHard finds, per training pair, the best BM25 matches among the
// training tools of the pair's dataset that are not positives. When the
// pair's first tool names its server, the first ServerNegatives places go
// to the other tools of that server (best BM25 match first, then in id
// order).
func (tr *trainer) mineHard() {
	byDS := map[string][]int32{}
	byServer := map[string][]int32{} // dataset + "\x00" + server → tools
	for i, t := range tr.corpus.Tools {
		if !tr.heldOut[t.ID] && t.Text == "" {
			byDS[t.Dataset] = append(byDS[t.Dataset], int32(i))
			if t.Server != "" {
				k := t.Dataset + "\x00" + t.Server
				byServer[k] = append(byServer[k], int32(i))
			}
		}
	}
	index := map[string]*bm25{}
	for ds, tools := range byDS {
		bags := make([]bag, len(tools))
		for k, ti := range tools {
			bags[k] = tr.docBags[ti]
		}
		index[ds] = newBM25(bags)
	}
	tr.hard = make([][]int32, len(tr.pairs))
	pool := tr.opts.HardPool
	parallel(tr.opts.Threads, len(tr.pairs), func(i int) {
		p := tr.pairs[i]
		ix, tools := index[p.Dataset], byDS[p.Dataset]
		if ix == nil {
			return // auxiliary pairs: in-batch negatives only
		}
		srv := tr.corpus.Tools[tr.pairPos[i][0]].Server
		k := pool + len(tr.pairPos[i])
		if srv != "" && tr.opts.ServerNegatives > 0 {
			k = len(tools) // siblings may rank anywhere
		}
		hits := ix.search(tr.qBags[i], k, nil)
		if srv != "" && tr.opts.ServerNegatives > 0 {
			siblings := byServer[p.Dataset+"\x00"+srv]
			isSibling := map[int32]bool{}
			for _, ti := range siblings {
				isSibling[ti] = true
			}
			add := func(ti int32) {
				if len(tr.hard[i]) < tr.opts.ServerNegatives && isSibling[ti] && !contains(tr.pairPos[i], ti) && !contains(tr.hard[i], ti) {
					tr.hard[i] = append(tr.hard[i], ti)
				}
			}
			for _, h := range hits {
				add(tools[h])
			}
			for _, ti := range siblings {
				add(ti)
			}
		}
		for _, h := range hits {
			ti := tools[h]
			if len(tr.hard[i]) >= pool {
				break
			}
			if !contains(tr.pairPos[i], ti) && !contains(tr.hard[i], ti) {
				tr.hard[i] = append(tr.hard[i], ti)
			}
		}
	})
}

func contains(s []int32, x int32) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// epochExamples draws the examples of one epoch: every (pair, positive)
// of each tool, capped at MaxPerTool × dataset weight per tool, shuffled.
func (tr *trainer) epochExamples(rng *rand.Rand) []example {
	byTool := map[int32][]example{}
	var order []int32
	for i, pos := range tr.pairPos {
		for _, ti := range pos {
			if _, ok := byTool[ti]; !ok {
				order = append(order, ti)
			}
			byTool[ti] = append(byTool[ti], example{pair: int32(i), pos: ti})
		}
	}
	sort.Slice(order, func(i, j int) bool { return order[i] < order[j] })
	var out, aux []example
	for _, ti := range order {
		ex := byTool[ti]
		if tr.corpus.Tools[ti].Text != "" {
			aux = append(aux, ex...)
			continue
		}
		limit := tr.opts.MaxPerTool
		if w, ok := tr.opts.DatasetWeight[tr.corpus.Tools[ti].Dataset]; ok {
			limit = int(math.Round(float64(limit) * w))
			if rep := int(math.Round(w)); rep > 1 {
				one := ex
				ex = make([]example, 0, len(one)*rep)
				for range rep {
					ex = append(ex, one...)
				}
			}
		}
		if len(ex) > limit {
			rng.Shuffle(len(ex), func(i, j int) { ex[i], ex[j] = ex[j], ex[i] })
			ex = ex[:limit]
		}
		out = append(out, ex...)
	}
	if len(aux) > 0 {
		rng.Shuffle(len(aux), func(i, j int) { aux[i], aux[j] = aux[j], aux[i] })
		out = append(out, aux[:min(len(aux), tr.opts.WordNetPerEpoch)]...)
	}
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func (tr *trainer) run(ctx context.Context) (*Result, error) {
	opts := tr.opts
	rng := rand.New(rand.NewPCG(opts.Seed, 0x5eed))
	tr.shards = make([]*sparseGrad, numShards)
	for i := range tr.shards {
		tr.shards[i] = newSparseGrad(tr.tab.V, tr.tab.D)
	}
	res := &Result{BestEpoch: 0}
	bestScore := -1.0
	tr.best = append([]float32(nil), tr.tab.E...)
	if len(tr.val) > 0 {
		m, per := tr.validate()
		tr.logf("epoch 0 (init): validation R@5 %.3f nDCG@10 %.3f (%s)", m.RecallAt5, m.NDCG10, perString(per))
		bestScore, res.Validation, res.PerDataset = m.NDCG10, m, per
	}
	adam := adamConfig{lr: opts.LearningRate, beta1: 0.9, beta2: 0.999, eps: 1e-8}
	for epoch := 1; epoch <= opts.Epochs; epoch++ {
		exs := tr.epochExamples(rng)
		var lossSum float64
		var n int
		for b := 0; b < len(exs); b += opts.BatchSize {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			batch := exs[b:min(b+opts.BatchSize, len(exs))]
			lossSum += tr.step(batch, rng, adam)
			n += len(batch)
		}
		loss := lossSum / math.Max(1, float64(n))
		if epoch == 1 {
			res.LossStart = loss
		}
		res.LossEnd = loss
		if len(tr.val) == 0 {
			tr.logf("epoch %d: %d examples, loss %.4f", epoch, len(exs), loss)
			copy(tr.best, tr.tab.E)
			res.BestEpoch = epoch
			continue
		}
		m, per := tr.validate()
		mark := ""
		if m.NDCG10 > bestScore {
			bestScore, res.Validation, res.PerDataset, res.BestEpoch = m.NDCG10, m, per, epoch
			copy(tr.best, tr.tab.E)
			mark = " *"
		}
		tr.logf("epoch %d: %d examples, loss %.4f, validation R@5 %.3f nDCG@10 %.3f%s (%s)",
			epoch, len(exs), loss, m.RecallAt5, m.NDCG10, mark, perString(per))
	}
	return res, nil
}

// softmaxGrad computes the cross-entropy of logits (entries -Inf are
// masked) against target and writes scale·(softmax - onehot) into grad. It
// returns the loss times lossScale.
func softmaxGrad(logits []float32, target int, grad []float32, scale float32, lossScale float64) float64 {
	maxS := float32(math.Inf(-1))
	for _, s := range logits {
		if s > maxS {
			maxS = s
		}
	}
	var z float64
	for _, s := range logits {
		if !math.IsInf(float64(s), -1) {
			z += math.Exp(float64(s - maxS))
		}
	}
	logZ := float64(maxS) + math.Log(z)
	for j, s := range logits {
		if math.IsInf(float64(s), -1) {
			grad[j] = 0
			continue
		}
		p := float32(math.Exp(float64(s) - logZ))
		if j == target {
			p--
		}
		grad[j] = p * scale
	}
	return lossScale * (logZ - float64(logits[target]))
}

// sampleTexts returns up to nq queries (validation first, then training)
// and nd tool documents.
func (tr *trainer) sampleTexts(nq, nd int) (queries, docs []string) {
	for _, p := range tr.val {
		if len(queries) < nq {
			queries = append(queries, p.Query)
		}
	}
	for _, p := range tr.pairs {
		if len(queries) < nq && p.Dataset != "wordnet" {
			queries = append(queries, p.Query)
		}
	}
	step := max(1, len(tr.corpus.Tools)/nd)
	for i := 0; i < len(tr.corpus.Tools) && len(docs) < nd; i += step {
		if t := tr.corpus.Tools[i]; t.Text == "" {
			docs = append(docs, t.Document())
		}
	}
	return queries, docs
}

// cosineDrift compares the query–document cosines of two models.
func cosineDrift(a, b *model2vec.Model, queries, docs []string) (maxErr, meanErr float64) {
	da := make([][]float32, len(docs))
	db := make([][]float32, len(docs))
	for i, d := range docs {
		da[i], db[i] = a.Embed(d), b.Embed(d)
	}
	var n int
	for _, q := range queries {
		qa, qb := a.Embed(q), b.Embed(q)
		for i := range docs {
			e := math.Abs(float64(dot(qa, da[i]) - dot(qb, db[i])))
			maxErr = math.Max(maxErr, e)
			meanErr += e
			n++
		}
	}
	if n > 0 {
		meanErr /= float64(n)
	}
	return maxErr, meanErr
}

func perString(per map[string]Metrics) string {
	names := make([]string, 0, len(per))
	for k := range per {
		names = append(names, k)
	}
	sort.Strings(names)
	var parts []string
	for _, k := range names {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, per[k].NDCG10))
	}
	return strings.Join(parts, ", ")
}

// step runs one batch: forward, InfoNCE loss over in-batch and hard
// negatives, backward, Adam. It returns the summed loss.
func (tr *trainer) step(batch []example, rng *rand.Rand, adam adamConfig) float64 {
	D := tr.tab.D
	invT := float32(1 / tr.opts.Temperature)
	modelShare := float32(1) // d score / d model cosine
	if tr.lex != nil {
		modelShare = tr.lex.a
	}
	qWeight := float32(1) // share of the query → documents loss
	if !tr.opts.OneWay {
		qWeight = 0.5
	}
	// Texts of the batch: queries first, then documents.
	qLocal := map[int32]int{}
	dLocal := map[int32]int{}
	var texts []bag
	var qOf []int // per example: text index of its query
	var posOf []int
	for _, ex := range batch {
		k, ok := qLocal[ex.pair]
		if !ok {
			k = len(qLocal)
			qLocal[ex.pair] = k
		}
		qOf = append(qOf, k)
	}
	nq := len(qLocal)
	texts = make([]bag, nq)
	for p, k := range qLocal {
		texts[k] = tr.qBags[p]
	}
	var docTools []int32
	addDoc := func(ti int32) int {
		k, ok := dLocal[ti]
		if !ok {
			k = len(docTools)
			dLocal[ti] = k
			docTools = append(docTools, ti)
			texts = append(texts, tr.docBags[ti])
		}
		return k
	}
	for _, ex := range batch {
		posOf = append(posOf, addDoc(ex.pos))
	}
	for _, ex := range batch {
		cands := tr.hard[ex.pair]
		for h := 0; h < tr.opts.HardNegatives && len(cands) > 0; h++ {
			addDoc(cands[rng.IntN(len(cands))])
		}
	}
	nd := len(docTools)
	nt := len(texts)

	U := make([]float32, nt*D)
	norms := make([]float32, nt)
	parallel(tr.opts.Threads, nt, func(i int) {
		u := U[i*D : i*D+D]
		n := tr.tab.embed(texts[i], u)
		norms[i] = n
		if n > 0 {
			for j := range u {
				u[j] /= n
			}
		}
	})
	// Scores (S, masked entries -Inf) and softmax gradients (G) per
	// example: query → documents.
	S := make([]float32, len(batch)*nd)
	G := make([]float32, len(batch)*nd)
	losses := make([]float64, len(batch))
	parallel(tr.opts.Threads, len(batch), func(e int) {
		ex := batch[e]
		uq := U[qOf[e]*D : qOf[e]*D+D]
		row := S[e*nd : e*nd+nd]
		for j := 0; j < nd; j++ {
			if j != posOf[e] && contains(tr.pairPos[ex.pair], docTools[j]) {
				row[j] = float32(math.Inf(-1)) // another positive: masked
				continue
			}
			c := dot(uq, U[(nq+j)*D:(nq+j)*D+D])
			if tr.lex != nil {
				c = tr.lex.a*c + tr.lex.b*tr.lex.queries[ex.pair].dot(tr.lex.docs[docTools[j]])
			}
			row[j] = c * invT
		}
		losses[e] = softmaxGrad(row, posOf[e], G[e*nd:e*nd+nd], invT*qWeight*modelShare, 1)
	})
	if !tr.opts.OneWay {
		// Document → queries: for each example, its positive document
		// against the batch's queries that it does not answer. Columns
		// are disjoint per goroutine.
		exOfDoc := make([][]int, nd)
		for e := range batch {
			exOfDoc[posOf[e]] = append(exOfDoc[posOf[e]], e)
		}
		parallel(tr.opts.Threads, nd, func(j int) {
			if len(exOfDoc[j]) == 0 {
				return
			}
			col := make([]float32, len(batch))
			gcol := make([]float32, len(batch))
			for _, e := range exOfDoc[j] {
				for e2 := range batch {
					if e2 != e && contains(tr.pairPos[batch[e2].pair], docTools[j]) {
						col[e2] = float32(math.Inf(-1))
						continue
					}
					// Unmasked query-side entries hold the score; a
					// query-side mask (another positive of e2) cannot
					// happen here because doc j is not a positive of e2.
					col[e2] = S[e2*nd+j]
				}
				for k := range gcol {
					gcol[k] = 0
				}
				losses[e] += softmaxGrad(col, e, gcol, invT*(1-qWeight)*modelShare, 1)
				for e2, g := range gcol {
					G[e2*nd+j] += g
				}
			}
		})
	}
	// Gradients with respect to the normalised vectors, then the raw sums.
	GU := make([]float32, nt*D)
	exOfQ := make([][]int, nq)
	for e := range batch {
		exOfQ[qOf[e]] = append(exOfQ[qOf[e]], e)
	}
	parallel(tr.opts.Threads, nt, func(i int) {
		g := GU[i*D : i*D+D]
		if i < nq {
			for _, e := range exOfQ[i] {
				row := G[e*nd : e*nd+nd]
				for j, w := range row {
					if w != 0 {
						axpy(w, U[(nq+j)*D:(nq+j)*D+D], g)
					}
				}
			}
		} else {
			j := i - nq
			for e := range batch {
				if w := G[e*nd+j]; w != 0 {
					axpy(w, U[qOf[e]*D:qOf[e]*D+D], g)
				}
			}
		}
		if norms[i] == 0 {
			for k := range g {
				g[k] = 0
			}
			return
		}
		u := U[i*D : i*D+D]
		c := dot(u, g)
		inv := 1 / norms[i]
		for k := range g {
			g[k] = (g[k] - c*u[k]) * inv
		}
	})
	// Accumulate token gradients in fixed shards, then one Adam step.
	parallel(tr.opts.Threads, numShards, func(s int) {
		sg := tr.shards[s]
		sg.reset()
		lo, hi := s*nt/numShards, (s+1)*nt/numShards
		for i := lo; i < hi; i++ {
			g := GU[i*D : i*D+D]
			b := texts[i]
			for k, id := range b.ids {
				sg.add(id, b.counts[k], g)
			}
		}
	})
	tr.tab.apply(tr.shards, adam, tr.opts.Threads)
	var sum float64
	for _, l := range losses {
		sum += l
	}
	return sum
}
