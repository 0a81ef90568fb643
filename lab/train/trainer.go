package train

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

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
	// Teacher vectors (unit length) per training pair's query and per
	// tool document; nil entries have none. Both nil without a teacher.
	qTeach, dTeach [][]float32
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

func perString(per map[string]rank.Metrics) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(per)) {
		parts = append(parts, fmt.Sprintf("%s %.2f", k, per[k].NDCG10))
	}
	return strings.Join(parts, ", ")
}
