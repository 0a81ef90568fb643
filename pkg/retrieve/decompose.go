package retrieve

import (
	"regexp"
	"strings"
)

var (
	// Step separators: "and then", ", then", "then", "afterwards", "after
	// that", "finally", "; ", new lines.
	stepSplit = regexp.MustCompile(`(?i)(?:,?\s+and\s+then\s+|,\s*then\s+|\s+then\s+|;\s*|\n+|,?\s+after\s+that,?\s+|,?\s+afterwards,?\s+|,?\s+finally,?\s+)`)
	// Sentence ends.
	sentenceSplit = regexp.MustCompile(`[.!?。！？]+(?:\s+|$)`)
	// Clause separators inside a step: "and", "as well as", commas.
	clauseSplit = regexp.MustCompile(`(?i)(?:,?\s+and\s+|,?\s+as\s+well\s+as\s+|,\s+|\s+also\s+)`)
	// Numbered or bulleted steps: "1. ", "2) ", "- ", "* ", "step 3:".
	numbered = regexp.MustCompile(`(?i)(?:^|\s)(?:\(?\d{1,2}[.)]|[-*•]|step\s+\d+:?)\s+`)
)

// Decompose splits a multi-step request into its steps: at "and then",
// ", then", "; ", sentence ends, new lines and numbered or bulleted steps.
// Steps with fewer than two content words are dropped. A request that is a
// single step returns nil.
func Decompose(query string) []string {
	q := numbered.ReplaceAllString(query, "\n")
	var parts []string
	for _, s := range sentenceSplit.Split(q, -1) {
		for _, p := range stepSplit.Split(s, -1) {
			parts = appendClauses(parts, p)
		}
	}
	if len(parts) < 2 {
		return nil
	}
	if len(parts) > maxSubQueries {
		parts = parts[:maxSubQueries]
	}
	return parts
}

// appendClauses appends the step, split at "and" and commas when every
// clause keeps at least two content words (so "beat tracking and MFCC
// extraction" splits but "Ana and Bo" does not).
func appendClauses(parts []string, step string) []string {
	step = strings.TrimSpace(strings.Trim(step, ",:"))
	if len(Terms(step)) < 2 {
		return parts
	}
	clauses := clauseSplit.Split(step, -1)
	if len(clauses) > 1 {
		ok := true
		for _, c := range clauses {
			if len(Terms(c)) < 2 {
				ok = false
				break
			}
		}
		if ok {
			for _, c := range clauses {
				parts = append(parts, strings.TrimSpace(c))
			}
			return parts
		}
	}
	return append(parts, step)
}
