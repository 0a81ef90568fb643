package sqlite

import (
	"context"
	"database/sql"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
)

var _ callseq.Store = (*Store)(nil)

// AddCallSequences implements callseq.Store in one transaction: each
// count is added to its pair's row (an upsert), whose day becomes the
// later of the two. Invalid counts are refused before anything is written.
func (s *Store) AddCallSequences(ctx context.Context, counts []callseq.Count) error {
	if err := callseq.Check(counts); err != nil {
		return err
	}
	return s.execEach(ctx, "add call-sequence counts", `INSERT INTO call_sequences (from_tool, to_tool, n, day) VALUES (?, ?, ?, ?)
		ON CONFLICT (from_tool, to_tool) DO UPDATE SET n = n + excluded.n, day = max(day, excluded.day)`,
		len(counts), func(i int) []any { c := counts[i]; return []any{c.From, c.To, c.N, c.Day} })
}

// ListCallSequences implements callseq.Store (sorted by pair).
func (s *Store) ListCallSequences(ctx context.Context) ([]callseq.Count, error) {
	return selectAll(ctx, s, "list call-sequence counts", `SELECT from_tool, to_tool, n, day FROM call_sequences ORDER BY from_tool, to_tool`,
		func(rows *sql.Rows) (callseq.Count, error) {
			var c callseq.Count
			err := rows.Scan(&c.From, &c.To, &c.N, &c.Day)
			return c, err
		})
}

// DeleteCallSequences implements callseq.Store in one transaction.
func (s *Store) DeleteCallSequences(ctx context.Context, pairs []callseq.Count) error {
	return s.execEach(ctx, "delete call-sequence counts", `DELETE FROM call_sequences WHERE from_tool = ? AND to_tool = ?`,
		len(pairs), func(i int) []any { return []any{pairs[i].From, pairs[i].To} })
}
