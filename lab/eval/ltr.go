package eval

// A learned scorer over the retriever's ranking features (FeatureRow):
// fitted on dumped candidates with a listwise softmax loss, and measured
// by re-ranking dumped candidates offline. Tried for issue 17 and not
// adopted (docs/retrieval.md, "Sixth pass"); kept so that a new feature
// can be measured in minutes.

import (
	"cmp"
	"encoding/json"
	"errors"
	"math"
	"math/rand"
	"sort"

	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// ReadFeatureRows reads a file Options.Features wrote.
func ReadFeatureRows(path string) ([]FeatureRow, error) {
	var rows []FeatureRow
	err := readJSONL(path, func(_ int, raw []byte) error {
		var r FeatureRow
		if err := json.Unmarshal(raw, &r); err != nil {
			return err
		}
		rows = append(rows, r)
		return nil
	})
	return rows, err
}

// ScorerInputs are the inputs of the learned scorer for one query's
// candidates: the fusion score first, the signals, their ranks and a few
// products with query-level figures (best coverage, best cosine, length).
func ScorerInputs(fs []retrieve.Features) [][]float64 {
	bestCov, maxCos := 0.0, -1.0
	for _, f := range fs {
		bestCov = math.Max(bestCov, f.Coverage)
		if f.HasSemantic {
			maxCos = math.Max(maxCos, f.Cosine)
		}
	}
	inv := func(r int) float64 {
		if r == 0 {
			return 0
		}
		return 1 / float64(r)
	}
	out := make([][]float64, len(fs))
	for i, f := range fs {
		qt := math.Min(float64(f.QueryTerms), 20) / 20
		gap, full := 0.0, 0.0
		if f.HasSemantic {
			gap = f.Cosine - maxCos
		}
		if f.Coverage >= 0.999 {
			full = 1
		}
		out[i] = []float64{
			f.Fused, f.Semantic, f.Cosine, f.Keyword, f.Server, f.Verb, f.Coverage, f.NameCoverage,
			inv(f.SemanticRank), inv(f.KeywordRank),
			f.Coverage * f.Semantic, f.Coverage * f.Keyword, f.NameCoverage * f.Keyword, f.Semantic * f.Keyword,
			bestCov * f.Semantic, bestCov * f.Keyword, gap, full, f.Semantic * qt, f.Keyword * qt,
		}
	}
	return out
}

// FitOptions configure FitScorer.
type FitOptions struct {
	Hidden      int     // tanh units next to the linear part (0: linear)
	Epochs      int     // default 10
	LearnRate   float64 // Adam step, default 0.01
	L2          float64 // pull towards the fusion score alone, default 0.01
	Temperature float64 // softmax temperature, default 0.2
	Seed        int64
}

// LearnedScorer is w·x + Σ v_j tanh(h_j·x + b_j) over ScorerInputs.
type LearnedScorer struct {
	W []float64   `json:"w"`
	H [][]float64 `json:"h,omitempty"`
	B []float64   `json:"b,omitempty"`
	V []float64   `json:"v,omitempty"`
}

// Score implements retrieve.Experimental.Scorer.
func (m *LearnedScorer) Score(fs []retrieve.Features) []float64 {
	xs := ScorerInputs(fs)
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i], _ = m.score(x)
	}
	return out
}

func (m *LearnedScorer) score(x []float64) (float64, []float64) {
	s := dot(m.W, x)
	act := make([]float64, len(m.H))
	for j := range m.H {
		act[j] = math.Tanh(dot(m.H[j], x) + m.B[j])
		s += m.V[j] * act[j]
	}
	return s, act
}

func dot(a, b []float64) float64 {
	s := 0.0
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// FitScorer fits a LearnedScorer on rows: a softmax over each query's
// candidates against a target spread evenly over its relevant ones,
// starting from (and regularised towards) the fusion score alone. Rows
// without a relevant candidate teach nothing and are skipped.
func FitScorer(rows []FeatureRow, o FitOptions) (*LearnedScorer, error) {
	o.Epochs = cmp.Or(o.Epochs, 10)
	o.LearnRate = cmp.Or(o.LearnRate, 0.01)
	o.L2 = cmp.Or(o.L2, 0.01)
	o.Temperature = cmp.Or(o.Temperature, 0.2)
	type ex struct {
		x   [][]float64
		tgt []float64
	}
	var data []ex
	for _, r := range rows {
		rel := map[string]bool{}
		for _, id := range r.Relevant {
			rel[id] = true
		}
		tgt := make([]float64, len(r.Cands))
		n := 0
		for i, c := range r.Cands {
			if rel[c.ToolID] {
				tgt[i], n = 1, n+1
			}
		}
		if n == 0 {
			continue
		}
		for i := range tgt {
			tgt[i] /= float64(n)
		}
		data = append(data, ex{ScorerInputs(r.Cands), tgt})
	}
	if len(data) == 0 {
		return nil, errors.New("eval: no row has a relevant tool among its candidates")
	}
	dim := len(data[0].x[0])
	rng := rand.New(rand.NewSource(o.Seed + 1))
	m := &LearnedScorer{W: make([]float64, dim), B: make([]float64, o.Hidden), V: make([]float64, o.Hidden)}
	m.W[0] = 1
	for range o.Hidden {
		h := make([]float64, dim)
		for i := range h {
			h[i] = rng.NormFloat64() * 0.3
		}
		m.H = append(m.H, h)
	}
	var params []*float64
	for i := range m.W {
		params = append(params, &m.W[i])
	}
	for j := range m.H {
		for i := range m.H[j] {
			params = append(params, &m.H[j][i])
		}
		params = append(params, &m.B[j], &m.V[j])
	}
	mom, vel := make([]float64, len(params)), make([]float64, len(params))
	const batch = 32
	step := 0
	for range o.Epochs {
		rng.Shuffle(len(data), func(i, j int) { data[i], data[j] = data[j], data[i] })
		for b := 0; b < len(data); b += batch {
			g := make([]float64, len(params))
			for _, e := range data[b:min(b+batch, len(data))] {
				s := make([]float64, len(e.x))
				acts := make([][]float64, len(e.x))
				for i, x := range e.x {
					s[i], acts[i] = m.score(x)
					s[i] /= o.Temperature
				}
				lse := logSumExp(s)
				for i, x := range e.x {
					d := (math.Exp(s[i]-lse) - e.tgt[i]) / o.Temperature
					k := 0
					for _, xv := range x {
						g[k] += d * xv
						k++
					}
					for j := range m.H {
						da := d * m.V[j] * (1 - acts[i][j]*acts[i][j])
						for _, xv := range x {
							g[k] += da * xv
							k++
						}
						g[k] += da
						g[k+1] += d * acts[i][j]
						k += 2
					}
				}
			}
			step++
			for k, p := range params {
				anchor := 0.0
				if k == 0 {
					anchor = 1
				}
				gk := g[k]/batch + o.L2*(*p-anchor)
				mom[k] = 0.9*mom[k] + 0.1*gk
				vel[k] = 0.999*vel[k] + 0.001*gk*gk
				mh := mom[k] / (1 - math.Pow(0.9, float64(step)))
				vh := vel[k] / (1 - math.Pow(0.999, float64(step)))
				*p -= o.LearnRate * mh / (math.Sqrt(vh) + 1e-8)
			}
		}
	}
	return m, nil
}

func logSumExp(s []float64) float64 {
	mx := math.Inf(-1)
	for _, v := range s {
		mx = math.Max(mx, v)
	}
	z := 0.0
	for _, v := range s {
		z += math.Exp(v - mx)
	}
	return mx + math.Log(z)
}

// RerankedFigures are the figures of dumped rows re-ranked by a scorer
// (nil: by the fusion score, which reproduces the run that wrote them).
type RerankedFigures struct {
	// Task mode (rows without a Task): the macro over Set, as Report.Macro.
	Task rank.Metrics
	// Agent mode (rows with a Task): the union of each capability
	// query's top 5 (tools already found skipped), recall per task.
	AgentRecall float64
	AgentTasks  int
}

// Rerank measures rows re-ranked by s.
func Rerank(rows []FeatureRow, s func([]retrieve.Features) []float64) RerankedFigures {
	var out RerankedFigures
	bySet := map[string]*rank.Sum[string]{}
	tasks := map[string][]FeatureRow{}
	var order []string
	for _, r := range rows {
		if r.Task != "" {
			if _, ok := tasks[r.Task]; !ok {
				order = append(order, r.Task)
			}
			tasks[r.Task] = append(tasks[r.Task], r)
			continue
		}
		a := bySet[r.Set]
		if a == nil {
			a = &rank.Sum[string]{}
			bySet[r.Set] = a
		}
		a.Add(rerankRow(r, s), r.Relevant, r.Groups)
	}
	if len(bySet) > 0 {
		sets := make(map[string]rank.Metrics, len(bySet))
		for name, a := range bySet {
			sets[name] = a.Result()
		}
		out.Task = rank.Macro(sets)
	}
	for _, id := range order {
		found := map[string]bool{}
		for _, r := range tasks[id] {
			n := 0
			for _, t := range rerankRow(r, s) {
				if n == 5 {
					break
				}
				if !found[t] {
					found[t], n = true, n+1
				}
			}
		}
		rel := tasks[id][0].Relevant
		h := 0
		for _, t := range rel {
			if found[t] {
				h++
			}
		}
		out.AgentRecall += float64(h) / float64(len(rel)) / float64(len(order))
		out.AgentTasks++
	}
	return out
}

func rerankRow(r FeatureRow, s func([]retrieve.Features) []float64) []string {
	idx := make([]int, len(r.Cands))
	sc := make([]float64, len(r.Cands))
	var scores []float64
	if s != nil {
		scores = s(r.Cands)
	}
	for i, c := range r.Cands {
		idx[i], sc[i] = i, c.Fused
		if scores != nil {
			sc[i] = scores[i]
		}
	}
	sort.SliceStable(idx, func(a, b int) bool {
		if sc[idx[a]] != sc[idx[b]] {
			return sc[idx[a]] > sc[idx[b]]
		}
		return r.Cands[idx[a]].ToolID < r.Cands[idx[b]].ToolID
	})
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = r.Cands[j].ToolID
	}
	return out
}
