package sqlite

import (
	"context"

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
	if len(counts) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `INSERT INTO call_sequences (from_tool, to_tool, n, day) VALUES (?, ?, ?, ?)
		ON CONFLICT (from_tool, to_tool) DO UPDATE SET n = n + excluded.n, day = max(day, excluded.day)`)
	if err != nil {
		return s.fail("prepare call-sequence upsert", err)
	}
	defer st.Close()
	for _, c := range counts {
		if _, err := st.ExecContext(ctx, c.From, c.To, c.N, c.Day); err != nil {
			return s.fail("add call-sequence counts", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit call-sequence counts", err)
	}
	return nil
}

// ListCallSequences implements callseq.Store (sorted by pair).
func (s *Store) ListCallSequences(ctx context.Context) ([]callseq.Count, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT from_tool, to_tool, n, day FROM call_sequences ORDER BY from_tool, to_tool`)
	if err != nil {
		return nil, s.fail("list call-sequence counts", err)
	}
	defer rows.Close()
	var out []callseq.Count
	for rows.Next() {
		var c callseq.Count
		if err := rows.Scan(&c.From, &c.To, &c.N, &c.Day); err != nil {
			return nil, s.fail("read call-sequence counts", err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail("read call-sequence counts", err)
	}
	return out, nil
}

// DeleteCallSequences implements callseq.Store in one transaction.
func (s *Store) DeleteCallSequences(ctx context.Context, pairs []callseq.Count) error {
	if len(pairs) == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, `DELETE FROM call_sequences WHERE from_tool = ? AND to_tool = ?`)
	if err != nil {
		return s.fail("prepare call-sequence delete", err)
	}
	defer st.Close()
	for _, c := range pairs {
		if _, err := st.ExecContext(ctx, c.From, c.To); err != nil {
			return s.fail("delete call-sequence counts", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit call-sequence delete", err)
	}
	return nil
}
