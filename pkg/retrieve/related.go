package retrieve

import (
	"sort"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// DefaultRelated is how many related tools a result lists by default.
const DefaultRelated = 3

// toolShape is what related reads from a tool's name: its action family
// and the other words of its name (the object it acts on), stemmed.
type toolShape struct {
	verb   string
	object []string
}

func shapeOf(name string, c stemCache) toolShape {
	var s toolShape
	for _, w := range catalog.SplitName(name) {
		if f, ok := verbFamilies[w]; ok && s.verb == "" {
			s.verb = f
			continue
		}
		if _, ok := verbFamilies[w]; ok || stopWords[w] || len(w) < 2 || isDigits(w) {
			continue
		}
		s.object = append(s.object, c.stem(w))
	}
	return s
}

// structureRelated lists up to Config.Related visible tools of d's server
// that are used with d, learned from the catalog's structure: tools acting on the
// same object with another action (screencast_start ↔ screencast_stop,
// search_issues → update_issue) rank first, then tools whose object the
// tool's own description mentions (a screenshot "of the current page" →
// new_page). Every candidate must share something with d; nothing is
// listed for a tool that shares nothing with its siblings.
func (r *Retriever) structureRelated(snap *visibleCorpus, d *kdoc, n int) []string {
	snap.servers()
	siblings := snap.byServer[d.tool.Server]
	if len(siblings) < 2 {
		return nil
	}
	type scored struct {
		id    string
		score float64
	}
	var out []scored
	for _, u := range siblings {
		if u == d {
			continue
		}
		s, ok := r.relatedScore(d, u)
		if ok {
			out = append(out, scored{u.tool.ID, s})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].id < out[j].id
	})
	ids := make([]string, 0, min(n, len(out)))
	for i := 0; i < len(out) && i < n; i++ {
		ids = append(ids, out[i].id)
	}
	return ids
}

// relatedScore scores u as a related tool of d; ok is false when the two
// share nothing (no object word in common, and d's description does not
// name u's object). By default the score is the learned prior's
// (RelatedPrior); Config.RelatedStructureOnly ranks by structureScore.
func (r *Retriever) relatedScore(d, u *kdoc) (float64, bool) {
	rel := relationOf(d.shape, u.shape, func(w string) bool {
		tf := d.tf(w)
		return tf != nil && tf[FieldDescription] > 0
	})
	if rel.overlap == 0 && rel.mention == 0 {
		return 0, false
	}
	if r.cfg.RelatedStructureOnly {
		return structureScore(d, u), true
	}
	p := r.cfg.RelatedPrior
	if p == nil {
		p = DefaultRelatedPrior
	}
	return p.score(rel), true
}

// structureScore: object overlap (Jaccard of the name objects), doubled
// when the actions differ (a companion step rather than a variant), plus
// 0.5 when d's description mentions u's object.
func structureScore(d, u *kdoc) float64 {
	a, b := d.shape, u.shape
	shared := sharedWords(a.object, b.object)
	s := 0.0
	if union := len(a.object) + len(b.object) - shared; union > 0 && shared > 0 {
		s = float64(shared) / float64(union)
		if a.verb != b.verb && a.verb != "" && b.verb != "" {
			s *= 2
		}
	}
	if len(b.object) > 0 {
		mentioned := 0
		for _, y := range b.object {
			if tf := d.tf(y); tf != nil && tf[FieldDescription] > 0 {
				mentioned++
			}
		}
		if mentioned == len(b.object) {
			s += 0.5
		}
	}
	return s
}

// sharedWords counts the words of a that b holds too.
func sharedWords(a, b []string) int {
	n := 0
	for _, x := range a {
		for _, y := range b {
			if x == y {
				n++
				break
			}
		}
	}
	return n
}
