package retrieve

import (
	"math"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// visibleCorpus is a read view of the index for one query: the visible tools and
// the corpus statistics computed over them only, so that tools the caller
// may not see influence neither the ranking nor the scores.
type visibleCorpus struct {
	ix       *KeywordIndex
	nVisible int
	allowed  []bool // by slot
	all      bool   // every indexed tool is visible
	avgLen   [numFields]float64

	// Per-server statistics over visible tools, computed on first use.
	*serverStats
}

// serverStats are the per-server statistics over the visible tools.
type serverStats struct {
	byServer map[string][]*kdoc
	srvLen   map[string]float64
	avgSrv   float64
	srvOf    []int32   // by slot: index into srvNames (visible tools only)
	srvNames []string  // visible servers
	srvNorm  []float64 // by server index: BM25 length normalisation
}

// view must be called with ix.mu held for reading.
func (ix *KeywordIndex) view(allow func(catalog.Tool) bool) *visibleCorpus {
	s := &visibleCorpus{ix: ix, allowed: make([]bool, len(ix.slots))}
	var sum [numFields]float64
	for _, d := range ix.slots {
		if d == nil || d.appOnly || (allow != nil && !allow(d.tool)) {
			continue
		}
		s.allowed[d.slot] = true
		s.nVisible++
		for f := range sum {
			sum[f] += float64(d.lens[f])
		}
	}
	if n := float64(s.nVisible); n > 0 {
		for f := range sum {
			s.avgLen[f] = sum[f] / n
		}
	}
	s.all = s.nVisible == len(ix.byID)
	return s
}

// servers computes the per-server statistics. When every tool is visible
// they are shared by all queries until the index changes.
func (s *visibleCorpus) servers() {
	if s.serverStats != nil {
		return
	}
	if !s.all {
		s.serverStats = s.computeServers()
		return
	}
	ix := s.ix
	ix.srvMu.Lock()
	defer ix.srvMu.Unlock()
	if ix.srvAll == nil || ix.srvAllGen != ix.gen {
		ix.srvAll, ix.srvAllGen = s.computeServers(), ix.gen
	}
	s.serverStats = ix.srvAll
}

func (s *visibleCorpus) computeServers() *serverStats {
	st := &serverStats{
		byServer: map[string][]*kdoc{},
		srvLen:   map[string]float64{},
		srvOf:    make([]int32, len(s.ix.slots)),
	}
	index := map[string]int32{}
	for _, d := range s.ix.slots {
		if d == nil || !s.allowed[d.slot] {
			continue
		}
		k, ok := index[d.tool.Server]
		if !ok {
			k = int32(len(st.srvNames))
			index[d.tool.Server] = k
			st.srvNames = append(st.srvNames, d.tool.Server)
		}
		st.srvOf[d.slot] = k
		st.byServer[d.tool.Server] = append(st.byServer[d.tool.Server], d)
		var l float64
		for f := Field(0); f < numFields; f++ {
			if f != FieldServer {
				l += float64(d.lens[f])
			}
		}
		if _, seen := st.srvLen[d.tool.Server]; !seen {
			l += float64(d.lens[FieldServer])
		}
		st.srvLen[d.tool.Server] += l
	}
	if len(st.srvLen) > 0 {
		var tot float64
		for _, l := range st.srvLen {
			tot += l
		}
		st.avgSrv = tot / float64(len(st.srvLen))
	}
	st.srvNorm = make([]float64, len(st.srvNames))
	for k, name := range st.srvNames {
		st.srvNorm[k] = 1 - bm25B + bm25B*st.srvLen[name]/math.Max(st.avgSrv, 1)
	}
	return st
}

// kwHit is the BM25F result for one tool.
type kwHit struct {
	d     *kdoc
	score float64
	mask  uint64 // bit i: query term i matched (first 64 terms)
}

// kwResult is the BM25F result for one query.
type kwResult struct {
	hits []kwHit
	// bySlot / maskBySlot: each tool's score and mask by slot (nil when
	// nothing is visible).
	bySlot     []float64
	maskBySlot []uint64
	terms      []string // distinct query terms, in query order
	max        float64
}

// matched lists the query terms whose bits are set in mask.
func (r *kwResult) matched(mask uint64) []string {
	var out []string
	for i, t := range r.terms {
		if i < 64 && mask&(1<<i) != 0 {
			out = append(out, t)
		}
	}
	return out
}

func idf(n, df float64) float64 {
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// scoreWeighted computes BM25F for every visible tool matching at least
// one query term, each term weighted as weights says.
func (s *visibleCorpus) scoreWeighted(order []string, weights map[string]float64) *kwResult {
	res := &kwResult{terms: order}
	n := float64(s.nVisible)
	if n == 0 {
		return res
	}
	acc := make([]float64, len(s.ix.slots))
	masks := make([]uint64, len(s.ix.slots))
	var touched []int
	var norm [numFields]float64
	for ti, term := range order {
		p := s.ix.postings(term)
		if len(p) == 0 {
			continue
		}
		df := len(p)
		if !s.all {
			df = 0
			for _, e := range p {
				if s.allowed[e.slot] {
					df++
				}
			}
		}
		if df == 0 {
			continue
		}
		w := idf(n, float64(df)) * weights[term]
		if w <= 0 {
			continue
		}
		for f := range norm {
			norm[f] = 0
			if s.avgLen[f] > 0 {
				norm[f] = bm25B / s.avgLen[f]
			}
		}
		for _, e := range p {
			if !s.allowed[e.slot] {
				continue
			}
			d, tf := s.ix.entry(e)
			var t float64
			for f := Field(0); f < numFields; f++ {
				if tf[f] == 0 || s.ix.weights[f] == 0 {
					continue
				}
				t += s.ix.weights[f] * float64(tf[f]) / (1 - bm25B + norm[f]*float64(d.lens[f]))
			}
			if t == 0 {
				continue
			}
			if acc[d.slot] == 0 {
				touched = append(touched, d.slot)
			}
			acc[d.slot] += w * t / (bm25K1 + t)
			if ti < 64 {
				masks[d.slot] |= 1 << ti
			}
		}
	}
	res.bySlot, res.maskBySlot = acc, masks
	res.hits = make([]kwHit, 0, len(touched))
	for _, slot := range touched {
		res.hits = append(res.hits, kwHit{d: s.ix.slots[slot], score: acc[slot], mask: masks[slot]})
		res.max = math.Max(res.max, acc[slot])
	}
	return res
}

// df returns the number of visible tools containing term.
func (s *visibleCorpus) df(term string) int {
	p := s.ix.postings(term)
	if s.all {
		return len(p)
	}
	n := 0
	for _, e := range p {
		if s.allowed[e.slot] {
			n++
		}
	}
	return n
}

// scoreServers computes BM25 for each server as one document made of the
// visible tools' text (all fields, unweighted) — the coarse level of
// two-level retrieval. Servers without a visible tool are not scored.
func (s *visibleCorpus) scoreServers(qterms []string) map[string]float64 {
	s.servers()
	out := map[string]float64{}
	n := float64(len(s.srvNames))
	if n == 0 {
		return out
	}
	counts, order := countTerms(qterms)
	tfs := make([]float64, len(s.srvNames))
	srvField := make([]float64, len(s.srvNames))
	has := make([]bool, len(s.srvNames))
	acc := make([]float64, len(s.srvNames))
	var touched, scored []int32
	for _, term := range order {
		touched = touched[:0]
		for _, e := range s.ix.postings(term) {
			if !s.allowed[e.slot] {
				continue
			}
			_, tf := s.ix.entry(e)
			k := s.srvOf[e.slot]
			if !has[k] {
				has[k] = true
				touched = append(touched, k)
			}
			for f := Field(0); f < numFields; f++ {
				if f != FieldServer {
					tfs[k] += float64(tf[f])
				}
			}
			// The server text is the same in every tool of the server:
			// count it once.
			if tf[FieldServer] > 0 {
				srvField[k] = float64(tf[FieldServer])
			}
		}
		if len(touched) > 0 {
			w := idf(n, float64(len(touched))) * float64(counts[term])
			for _, k := range touched {
				t := (tfs[k] + srvField[k]) / s.srvNorm[k]
				if acc[k] == 0 {
					scored = append(scored, k)
				}
				acc[k] += w * t / (bm25K1 + t)
				tfs[k], srvField[k], has[k] = 0, 0, false
			}
		}
	}
	for _, k := range scored {
		out[s.srvNames[k]] = acc[k]
	}
	return out
}

func countTerms(terms []string) (map[string]int, []string) {
	counts := map[string]int{}
	var order []string
	for _, t := range terms {
		if counts[t] == 0 {
			order = append(order, t)
		}
		counts[t]++
	}
	return counts, order
}
