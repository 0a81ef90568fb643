package train

import (
	"math"
	"math/rand/v2"
)

// softmaxGrad computes the cross-entropy of logits (entries -Inf are
// masked) against target and writes scale·(softmax - onehot) into grad. It
// returns the loss times lossScale.
func softmaxGrad(logits []float32, target int, grad []float32, scale float32, lossScale float64) float64 {
	logZ := logSumExp(logits)
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

// logSumExp is log Σ exp(logits) over the entries that are not -Inf.
func logSumExp(logits []float32) float64 {
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
	return float64(maxS) + math.Log(z)
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
		if tr.qTeach != nil {
			target := make([]float32, nd)
			if tr.teacherTarget(tr.qTeach[ex.pair], docTools, row, posOf[e], target) {
				losses[e] = softTargetGrad(row, target, G[e*nd:e*nd+nd], invT*qWeight*modelShare)
				return
			}
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
