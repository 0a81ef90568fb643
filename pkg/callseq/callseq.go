// Package callseq keeps the opt-in "called after, in the same session"
// counts that feed the related tools of find_tools: when a session calls
// tool B right after tool A, the pair (A→B) is counted. Only the two tool
// ids, the count and the day of the last count are kept: no arguments, no
// results, no key or session ids, no finer timestamps. The Recorder
// aggregates pairs in memory and adds them to a Store in the background;
// the sync reads the counts back, drops the pairs of tools that are gone
// (Prune) and hands the retriever a Table.
package callseq

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Count is the aggregated count of one ordered tool pair: To was called
// right after From, in the same session, N times; Day is the last day
// (days since 1970-01-01 UTC) a call was counted.
type Count struct {
	From string
	To   string
	N    int64
	Day  int32
}

// Store keeps the counts: the local SQLite store (pkg/catalog/sqlite) and
// the DynamoDB call-sequence table (pkg/aws/dynamo) implement it.
type Store interface {
	// AddCallSequences adds each Count's N to its pair (creating it) and
	// sets the pair's day to the later of the stored and the given day.
	AddCallSequences(ctx context.Context, counts []Count) error
	// ListCallSequences returns every stored pair.
	ListCallSequences(ctx context.Context) ([]Count, error)
	// DeleteCallSequences removes the given pairs (N and Day are ignored);
	// a missing pair is not an error.
	DeleteCallSequences(ctx context.Context, pairs []Count) error
}

// Day is the day number of t (days since 1970-01-01 UTC): the only time a
// count keeps.
func Day(t time.Time) int32 { return int32(t.UTC().Unix() / 86400) }

// MaxToolID bounds a tool id the stores accept (catalog ids are far
// shorter).
const MaxToolID = 512

// Check reports the first invalid count: an empty or over-long tool id, a
// pair of a tool with itself, or a count that is not positive.
func Check(counts []Count) error {
	for _, c := range counts {
		switch {
		case c.From == "" || c.To == "":
			return errors.New("call sequence: a tool id is empty")
		case len(c.From) > MaxToolID || len(c.To) > MaxToolID:
			return fmt.Errorf("call sequence: a tool id is longer than %d bytes", MaxToolID)
		case c.From == c.To:
			return fmt.Errorf("call sequence: %q follows itself", c.From)
		case c.N <= 0:
			return fmt.Errorf("call sequence %s→%s: the count %d is not positive", c.From, c.To, c.N)
		}
	}
	return nil
}

// Prune reads every count from store, deletes the pairs one of whose
// tools is not in exists (the tool left the catalog) or that were last
// counted before minDay (0: none is too old), and returns the others.
func Prune(ctx context.Context, store Store, exists func(toolID string) bool, minDay int32) ([]Count, error) {
	all, err := store.ListCallSequences(ctx)
	if err != nil {
		return nil, fmt.Errorf("read the call-sequence counts: %w", err)
	}
	var keep, gone []Count
	for _, c := range all {
		if !exists(c.From) || !exists(c.To) || c.Day < minDay {
			gone = append(gone, c)
			continue
		}
		keep = append(keep, c)
	}
	if len(gone) > 0 {
		if err := store.DeleteCallSequences(ctx, gone); err != nil {
			return keep, fmt.Errorf("drop the call-sequence counts of tools that are gone: %w", err)
		}
	}
	return keep, nil
}
