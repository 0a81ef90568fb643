package retrieve

import "fmt"

// Match levels of a result (Result.Match).
const (
	MatchStrong  = "strong"
	MatchPartial = "partial"
	MatchWeak    = "weak"
)

// MatchSignals are the signals behind Result.Match. Unlike the fused
// score, which is relative to the other candidates of the same query, they
// mean the same thing for every query and catalog.
type MatchSignals struct {
	// Coverage is the IDF-weighted share of the query's terms that the
	// tool's text holds (name, title, description, parameters, server,
	// tags); a query term no visible tool holds counts with the highest
	// IDF, so a query about something the catalog lacks stays low.
	Coverage float64
	// NameCoverage is the same share over the tool's name and title only.
	NameCoverage float64
	// Cosine is the raw cosine of the query and the tool (HasCosine false
	// when no vector index answered).
	Cosine    float64
	HasCosine bool
}

// Calibration maps MatchSignals to a match level:
//
//	strong:  Coverage ≥ StrongCoverage and (NameCoverage ≥ StrongName or Cosine ≥ StrongCosine)
//	partial: not strong, and Coverage ≥ PartialCoverage or Cosine ≥ PartialCosine
//	weak:    otherwise
//
// The thresholds were calibrated on the DEV sets (docs/retrieval.md,
// "Match calibration"); the cosine thresholds belong to the builtin
// embedder.
type Calibration struct {
	StrongCoverage  float64
	StrongName      float64
	StrongCosine    float64
	PartialCoverage float64
	PartialCosine   float64
}

// DefaultCalibration is the calibration chosen on the DEV sets.
var DefaultCalibration = Calibration{
	StrongCoverage:  0.75,
	StrongName:      0.6,
	StrongCosine:    0.5,
	PartialCoverage: 0.6,
	PartialCosine:   0.45,
}

// Level returns the match level of s.
func (c Calibration) Level(s MatchSignals) string {
	if c == (Calibration{}) {
		c = DefaultCalibration
	}
	cos := -1.0
	if s.HasCosine {
		cos = s.Cosine
	}
	switch {
	case s.Coverage >= c.StrongCoverage && (s.NameCoverage >= c.StrongName || cos >= c.StrongCosine):
		return MatchStrong
	case s.Coverage >= c.PartialCoverage || cos >= c.PartialCosine:
		return MatchPartial
	}
	return MatchWeak
}

// NoMatchHint is the hint given for a query none of whose results is
// better than a weak match.
func NoMatchHint(query string) string {
	return fmt.Sprintf("no tool matches %q well; try other words (one capability per query), or check that your key is granted the server that provides it", query)
}

// matchSignals computes c's MatchSignals from its keyword query.
func matchSignals(c *candidate) MatchSignals {
	s := MatchSignals{Cosine: c.cosine, HasCosine: c.hasSem}
	q := c.q
	if q == nil {
		return s
	}
	var total, held, name float64
	seen := map[string]bool{}
	for _, t := range q.terms {
		if seen[t] {
			continue
		}
		seen[t] = true
		w := q.idf[t]
		total += w
		inAny, inName := c.d.holds(t)
		for _, alt := range q.alts[t] {
			a, n := c.d.holds(alt)
			inAny, inName = inAny || a, inName || n
		}
		if inAny {
			held += w
		}
		if inName {
			name += w
		}
	}
	if total > 0 {
		s.Coverage, s.NameCoverage = held/total, name/total
	}
	return s
}

// holds reports whether the tool's text holds term anywhere, and in its
// name or title.
func (d *kdoc) holds(term string) (any, name bool) {
	tf := d.tf(term)
	if tf == nil {
		return false, false
	}
	return true, tf[FieldName] > 0 || tf[FieldTitle] > 0
}
