package vault

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // database/sql driver "sqlite"
)

// SQLite stores sealed rows in a SQLite table (upstream_grants).
type SQLite struct {
	db *sql.DB
}

// OpenSQLite opens (creating if needed) the database at path.
func OpenSQLite(ctx context.Context, path string) (*SQLite, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open vault database %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: abs}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, fmt.Errorf("open vault database %s: %w", path, err)
	}
	db.SetMaxOpenConns(4)
	_, err = db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS upstream_grants (
		principal TEXT NOT NULL,
		server TEXT NOT NULL,
		key_id TEXT NOT NULL DEFAULT '',
		kind TEXT NOT NULL,
		seal_key TEXT NOT NULL,
		sealed BLOB NOT NULL,
		expires_at INTEGER NOT NULL DEFAULT 0,
		updated_at INTEGER NOT NULL,
		PRIMARY KEY (principal, server)
	)`)
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open vault database %s: %w", path, err)
	}
	return &SQLite{db: db}, nil
}

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

func unix(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromUnix(ms int64) time.Time {
	if ms == 0 {
		return time.Time{}
	}
	return time.UnixMilli(ms).UTC()
}

// GetRow implements Rows. A row whose expiry has passed is not found.
func (s *SQLite) GetRow(ctx context.Context, k Key) (Row, error) {
	r := Row{Principal: k.Principal, Server: k.Server}
	var exp, upd int64
	err := s.db.QueryRowContext(ctx, `SELECT key_id, kind, seal_key, sealed, expires_at, updated_at FROM upstream_grants WHERE principal = ? AND server = ?`, k.Principal, k.Server).
		Scan(&r.KeyID, &r.Kind, &r.SealKey, &r.Sealed, &exp, &upd)
	if errors.Is(err, sql.ErrNoRows) {
		return Row{}, ErrNotFound
	}
	if err != nil {
		return Row{}, err
	}
	r.Expiry, r.Updated = fromUnix(exp), fromUnix(upd)
	if !r.Expiry.IsZero() && time.Now().After(r.Expiry) {
		return Row{}, ErrNotFound
	}
	return r, nil
}

// PutRow implements Rows.
func (s *SQLite) PutRow(ctx context.Context, r Row) error {
	_, err := s.db.ExecContext(ctx, `INSERT INTO upstream_grants (principal, server, key_id, kind, seal_key, sealed, expires_at, updated_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (principal, server) DO UPDATE SET key_id = excluded.key_id, kind = excluded.kind, seal_key = excluded.seal_key,
			sealed = excluded.sealed, expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
		r.Principal, r.Server, r.KeyID, r.Kind, r.SealKey, r.Sealed, unix(r.Expiry), unix(r.Updated))
	return err
}

// DeleteRow implements Rows.
func (s *SQLite) DeleteRow(ctx context.Context, k Key) error {
	_, err := s.db.ExecContext(ctx, `DELETE FROM upstream_grants WHERE principal = ? AND server = ?`, k.Principal, k.Server)
	return err
}

// ListRows implements Rows (sorted by principal and server).
func (s *SQLite) ListRows(ctx context.Context, principal string) ([]Row, error) {
	q := `SELECT principal, server, key_id, kind, seal_key, sealed, expires_at, updated_at FROM upstream_grants`
	var args []any
	if principal != "" {
		q += ` WHERE principal = ?`
		args = append(args, principal)
	}
	rows, err := s.db.QueryContext(ctx, q+` ORDER BY principal, server`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var exp, upd int64
		if err := rows.Scan(&r.Principal, &r.Server, &r.KeyID, &r.Kind, &r.SealKey, &r.Sealed, &exp, &upd); err != nil {
			return nil, err
		}
		r.Expiry, r.Updated = fromUnix(exp), fromUnix(upd)
		out = append(out, r)
	}
	return out, rows.Err()
}
