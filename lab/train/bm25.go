package train

import (
	"math"
	"sort"
)

// bag is a tokenized text: distinct token ids (ascending) and their counts.
type bag struct {
	ids    []int32
	counts []float32
}

func makeBag(ids []int) bag {
	if len(ids) == 0 {
		return bag{}
	}
	s := make([]int32, len(ids))
	for i, id := range ids {
		s[i] = int32(id)
	}
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	var b bag
	for i, id := range s {
		if i > 0 && id == s[i-1] {
			b.counts[len(b.counts)-1]++
			continue
		}
		b.ids = append(b.ids, id)
		b.counts = append(b.counts, 1)
	}
	return b
}

func (b bag) len() float32 {
	var n float32
	for _, c := range b.counts {
		n += c
	}
	return n
}

// bm25 is a small Okapi BM25 index over token bags (k1 1.2, b 0.75), used to
// mine hard negatives and as a reference ranking.
type bm25 struct {
	postings map[int32][]posting
	idf      map[int32]float64
	norm     []float64 // k1 * (1 - b + b*len/avglen)
	n        int
}

type posting struct {
	doc int32
	tf  float32
}

func newBM25(docs []bag) *bm25 {
	const k1, b = 1.2, 0.75
	ix := &bm25{postings: map[int32][]posting{}, idf: map[int32]float64{}, n: len(docs)}
	var total float64
	for d, bg := range docs {
		total += float64(bg.len())
		for i, id := range bg.ids {
			ix.postings[id] = append(ix.postings[id], posting{int32(d), bg.counts[i]})
		}
	}
	avg := total / math.Max(1, float64(len(docs)))
	ix.norm = make([]float64, len(docs))
	for d, bg := range docs {
		ix.norm[d] = k1 * (1 - b + b*float64(bg.len())/math.Max(avg, 1e-9))
	}
	for id, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[id] = math.Log(1 + (float64(len(docs))-df+0.5)/(df+0.5))
	}
	return ix
}

// search returns up to k document indexes by falling score (ties by index).
func (ix *bm25) search(q bag, k int, scores []float64) []int {
	if len(scores) < ix.n {
		scores = make([]float64, ix.n)
	}
	scores = scores[:ix.n]
	for i := range scores {
		scores[i] = 0
	}
	var touched []int
	for _, id := range q.ids {
		idf := ix.idf[id]
		for _, p := range ix.postings[id] {
			if scores[p.doc] == 0 {
				touched = append(touched, int(p.doc))
			}
			tf := float64(p.tf)
			scores[p.doc] += idf * tf * 2.2 / (tf + ix.norm[p.doc])
		}
	}
	sort.Ints(touched) // ties go to the lower index
	top := topKFunc(len(touched), k, func(i int) float64 { return scores[touched[i]] })
	for i, t := range top {
		top[i] = touched[t]
	}
	return top
}
