package retrieve

import (
	"github.com/toolrag/mcp-gateway/pkg/callseq"
)

// SetCallSequences hands the retriever the observed call sequences (the
// opt-in "called after, in the same session" counts, pkg/callseq) that
// related merges with the catalog's structure; nil removes them. Safe to
// call while retrievals run.
func (r *Retriever) SetCallSequences(t *callseq.Table) { r.seq.Store(t) }

// CallSequences returns the table SetCallSequences gave (nil: none).
func (r *Retriever) CallSequences() *callseq.Table { return r.seq.Load() }

// related lists up to Config.Related visible tools used with d: the tools
// observed right before or after it in the gateway's sessions when the
// pair is strong (callseq.StrongCount calls and a smoothed share of
// callseq.StrongShare), then the related tools of d's server read from the
// catalog's structure (structureRelated), then the weaker observed ones.
// Observed tools may be of another server. Only tools the request may see
// are listed: the observed ones are checked against the same visible set
// as every result.
func (r *Retriever) related(snap *visibleCorpus, d *kdoc) []string {
	n := r.cfg.Related
	if n == 0 {
		n = DefaultRelated
	}
	edges := r.seq.Load().With(d.tool.ID)
	structure := r.structureRelated(snap, d, n)
	if len(edges) == 0 {
		return structure
	}
	out := make([]string, 0, n)
	seen := map[string]bool{d.tool.ID: true}
	add := func(id string) {
		if len(out) < n && !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	var weak []string
	for _, e := range edges {
		u := snap.ix.byID[e.Tool]
		if u == nil || !snap.allowed[u.slot] {
			continue // not in the catalog any more, or not the caller's to see
		}
		if e.Strong {
			add(e.Tool)
		} else {
			weak = append(weak, e.Tool)
		}
	}
	for _, id := range structure {
		add(id)
	}
	for _, id := range weak {
		add(id)
	}
	return out
}
