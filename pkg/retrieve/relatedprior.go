package retrieve

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
)

//go:generate go run ../../lab/gen/relatedprior -train ../../../shared/train -extra ../../lab/data/mcpagent -out relatedprior.json

// RelatedPrior is what related learns from tasks that used several tools
// of one server (the multi-tool pairs of the training sets): how much more
// often than two tools of the server taken at random two tools with a
// given relation are needed by the same task (their lift). The relations
// are properties of any catalog, never tool or server names, so the prior
// transfers to catalogs it was not learned on:
//
//   - Overlap: how much of their name objects the two tools share (none,
//     some, all; "search_issues" and "update_issue" share all);
//   - Mention: whether the first tool's description names the second's
//     object (a screenshot "of the current page" → "new_page");
//   - Verbs: the pair of action families ("read>update": a read tool and
//     an update tool).
//
// A pair's score is the sum of the logarithms of its lifts.
type RelatedPrior struct {
	Overlap [3]float64         `json:"overlap"`
	Mention [2]float64         `json:"mention"`
	Verbs   map[string]float64 `json:"verbs"`
	// Tasks and Pairs say what it was learned from (multi-tool tasks,
	// ordered same-server tool pairs in them).
	Tasks int `json:"tasks"`
	Pairs int `json:"pairs"`
}

//go:embed relatedprior.json
var relatedPriorJSON []byte

// DefaultRelatedPrior is the prior learned from ../shared/train (the DEV
// sets tooltalk, taubench and docker_mcp_registry left out) and the
// multi-tool tasks of lab/data/mcpagent; see docs/retrieval.md.
var DefaultRelatedPrior = mustPrior(relatedPriorJSON)

func mustPrior(b []byte) *RelatedPrior {
	var p RelatedPrior
	if err := json.Unmarshal(b, &p); err != nil {
		panic(fmt.Sprintf("retrieve: the embedded related prior is invalid: %v", err))
	}
	return &p
}

// pairRelation is what the prior reads from an ordered pair of tools.
type pairRelation struct {
	overlap int    // 0 none, 1 some, 2 all of the smaller object
	mention int    // 1 when a's description names all of b's object words
	verbs   string // "create>read"; "-" for a name without an action
}

func verbKey(a, b string) string {
	if a == "" {
		a = "-"
	}
	if b == "" {
		b = "-"
	}
	return a + ">" + b
}

// relationOf reads the relation of a to b from their shapes; mentions
// reports whether a's description holds a stemmed word.
func relationOf(a, b toolShape, mentions func(string) bool) pairRelation {
	rel := pairRelation{verbs: verbKey(a.verb, b.verb)}
	shared := sharedWords(a.object, b.object)
	switch {
	case shared == 0:
	case shared >= min(len(a.object), len(b.object)):
		rel.overlap = 2
	default:
		rel.overlap = 1
	}
	if len(b.object) > 0 {
		all := true
		for _, y := range b.object {
			if !mentions(y) {
				all = false
				break
			}
		}
		if all {
			rel.mention = 1
		}
	}
	return rel
}

// score is the log-lift of a relation (0 for a relation the prior has no
// figure for).
func (p *RelatedPrior) score(rel pairRelation) float64 {
	s := logLift(p.Overlap[rel.overlap]) + logLift(p.Mention[rel.mention])
	if v, ok := p.Verbs[rel.verbs]; ok {
		s += logLift(v)
	}
	return s
}

func logLift(l float64) float64 {
	if l <= 0 {
		return math.Log(1e-3)
	}
	return math.Log(l)
}

// PriorTool is a tool of a training catalog for LearnRelatedPrior.
type PriorTool struct {
	Name        string
	Description string
}

// PriorCatalog is one server's tools and the tasks that needed several of
// them (each task: indexes into Tools).
type PriorCatalog struct {
	Tools []PriorTool
	Tasks [][]int
}

// LearnRelatedPrior counts the relations of the ordered tool pairs needed
// together by a task, against those of all ordered pairs of the same
// servers, and returns their lifts, smoothed towards 1 by alpha pseudo
// counts: lift = (co + alpha) / (expected + alpha), where co is how many
// co-needed pairs have the relation and expected how many would if the
// co-needed pairs were drawn at random from their servers' pairs (a
// relation seen rarely either way keeps a lift near 1). Catalogs without
// a multi-tool task are skipped.
func LearnRelatedPrior(cats []PriorCatalog, alpha float64) *RelatedPrior {
	co, bg := newRelationCounts(), newRelationCounts()
	tasks := 0
	for _, cat := range cats {
		if len(cat.Tasks) == 0 || len(cat.Tools) < 2 {
			continue
		}
		c := stemCache{}
		shapes := make([]toolShape, len(cat.Tools))
		descs := make([]map[string]bool, len(cat.Tools))
		all := make([]int, len(cat.Tools))
		for i, t := range cat.Tools {
			shapes[i] = shapeOf(t.Name, c)
			descs[i] = map[string]bool{}
			for _, w := range c.terms(t.Description) {
				descs[i][w] = true
			}
			all[i] = i
		}
		rel := func(i, j int) pairRelation {
			return relationOf(shapes[i], shapes[j], func(w string) bool { return descs[i][w] })
		}
		// Relations depend on shapes and descriptions only: count each
		// distinct (shape, description) tool once per pair of kinds by
		// brute force, the catalogs are small enough (a few thousand).
		bg.addPairs(all, rel)
		for _, task := range cat.Tasks {
			seen := map[int]bool{}
			var ids []int
			for _, i := range task {
				if i >= 0 && i < len(cat.Tools) && !seen[i] {
					seen[i] = true
					ids = append(ids, i)
				}
			}
			if len(ids) < 2 {
				continue
			}
			tasks++
			co.addPairs(ids, rel)
		}
	}
	p := &RelatedPrior{Verbs: map[string]float64{}, Tasks: tasks, Pairs: int(co.n)}
	lift := func(n, all float64) float64 {
		if bg.n == 0 || all == 0 {
			return 1
		}
		expected := co.n * all / bg.n
		return round6((n + alpha) / (expected + alpha))
	}
	for k := range co.overlap {
		p.Overlap[k] = lift(co.overlap[k], bg.overlap[k])
	}
	for k := range co.mention {
		p.Mention[k] = lift(co.mention[k], bg.mention[k])
	}
	keys := make([]string, 0, len(bg.verbs))
	for k := range bg.verbs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p.Verbs[k] = lift(co.verbs[k], bg.verbs[k])
	}
	return p
}

// relationCounts counts ordered tool pairs by each part of their relation.
type relationCounts struct {
	overlap [3]float64
	mention [2]float64
	verbs   map[string]float64
	n       float64 // pairs counted
}

func newRelationCounts() *relationCounts {
	return &relationCounts{verbs: map[string]float64{}}
}

// addPairs counts every ordered pair of distinct ids by its relation.
func (c *relationCounts) addPairs(ids []int, rel func(i, j int) pairRelation) {
	for _, i := range ids {
		for _, j := range ids {
			if i == j {
				continue
			}
			r := rel(i, j)
			c.overlap[r.overlap]++
			c.mention[r.mention]++
			c.verbs[r.verbs]++
			c.n++
		}
	}
}

// String is a one-line summary of the prior.
func (p *RelatedPrior) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d tasks, %d pairs; overlap none/some/all %.2f/%.2f/%.2f; mention no/yes %.2f/%.2f", p.Tasks, p.Pairs,
		p.Overlap[0], p.Overlap[1], p.Overlap[2], p.Mention[0], p.Mention[1])
	return b.String()
}
