// Package sqlite is the local catalog store: a catalog.Store on one SQLite
// file (modernc.org/sqlite, pure Go, no cgo) used when the gateway runs as a
// single process. The AWS implementation is in pkg/aws/dynamo.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/writeplan"
)

// DefaultPath is the database file used when TOOL_RAG_DB is unset.
const DefaultPath = "tool_registry.db"

// Store is a catalog.Store in one SQLite file in WAL mode. It is safe for
// concurrent use, also by several processes on the same file: every write
// is one IMMEDIATE transaction, and writers wait for each other up to the
// busy timeout.
type Store struct {
	db   *sql.DB
	path string
	now  func() time.Time
}

var _ catalog.Store = (*Store)(nil)

// busyTimeout is how long a writer waits for another writer's lock.
const busyTimeout = 10 * time.Second

// Open opens (creating if needed) the catalog database at path and
// brings its schema up to date. A file that is not a SQLite database, is
// unreadable, or has a schema newer than this program gives an error naming
// the path; the file is left untouched.
func Open(ctx context.Context, path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("open tool database: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("open tool database %s: %w", path, err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("open tool database %s: is a directory", path)
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeout.Milliseconds()))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Set("_txlock", "immediate")
	dsn := "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open tool database %s: %w", path, err)
	}
	db.SetMaxOpenConns(8)
	db.SetMaxIdleConns(8)
	s := &Store{db: db, path: abs, now: func() time.Time { return time.Now().UTC() }}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open tool database %s: %w", path, err)
	}
	return s, nil
}

// Path returns the absolute path of the database file.
func (s *Store) Path() string { return s.path }

// SizeBytes returns the size on disk of the database, its WAL and shared
// memory files (0 when they cannot be read), for /tool-rag/health.
func (s *Store) SizeBytes() int64 {
	var n int64
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if fi, err := os.Stat(s.path + suffix); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// migrations[i] brings the schema from version i to i+1. Append only.
var migrations = []string{
	// 1: servers and tools.
	`CREATE TABLE servers (
		id          TEXT PRIMARY KEY,
		title       TEXT NOT NULL DEFAULT '',
		description TEXT NOT NULL DEFAULT '',
		status      TEXT NOT NULL,
		last_error  TEXT NOT NULL DEFAULT '',
		synced_at   TEXT NOT NULL DEFAULT ''
	) STRICT;
	CREATE TABLE tools (
		id               TEXT PRIMARY KEY,
		server_id        TEXT NOT NULL REFERENCES servers(id) ON DELETE CASCADE,
		name             TEXT NOT NULL,
		title            TEXT NOT NULL DEFAULT '',
		description      TEXT NOT NULL DEFAULT '',
		input_schema     TEXT,
		annotations      TEXT,
		tool_type        TEXT NOT NULL,
		permission_scope TEXT NOT NULL,
		tags             TEXT,
		status           TEXT NOT NULL,
		content_hash     TEXT NOT NULL,
		updated_at       TEXT NOT NULL
	) STRICT;
	CREATE INDEX tools_by_server ON tools(server_id);`,
	// 2: the opt-in call-sequence counts (pkg/callseq): tool pair, count,
	// day of the last count. Nothing else about a call is stored.
	`CREATE TABLE call_sequences (
		from_tool TEXT NOT NULL,
		to_tool   TEXT NOT NULL,
		n         INTEGER NOT NULL,
		day       INTEGER NOT NULL,
		PRIMARY KEY (from_tool, to_tool)
	) STRICT, WITHOUT ROWID;`,
}

// SchemaVersion is the schema version this program writes.
var SchemaVersion = len(migrations)

func (s *Store) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return fmt.Errorf("read schema version (is this a SQLite database?): %w", err)
	}
	if version > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this program supports (%d); upgrade the gateway", version, len(migrations))
	}
	if version > 0 {
		// A file that is SQLite but not ours is not migrated.
		if err := s.checkTables(ctx); err != nil {
			return err
		}
	}
	for v := version; v < len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		// Re-check inside the write lock: another process may have migrated.
		var cur int
		if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&cur); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if cur > v {
			tx.Rollback()
			v = cur - 1
			continue
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
		if err := tx.Commit(); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
		}
	}
	if err := s.checkTables(ctx); err != nil {
		return err
	}
	return s.addColumns(ctx)
}

// additiveColumns are columns added without a schema version: a program
// of the previous release reads and writes the database as before (it
// names its columns and leaves these NULL), and this one fills them at
// its next sync.
var additiveColumns = []struct{ table, column string }{
	{"tools", "extra"},   // catalog.Tool.Extra
	{"servers", "extra"}, // catalog.Server.Extra
}

func (s *Store) addColumns(ctx context.Context) error {
	for _, c := range additiveColumns {
		var n int
		if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n); err != nil {
			return fmt.Errorf("read the columns of table %s: %w", c.table, err)
		}
		if n > 0 {
			continue
		}
		if _, err := s.db.ExecContext(ctx, `ALTER TABLE `+c.table+` ADD COLUMN `+c.column+` TEXT`); err != nil {
			// Another process may have added it since.
			if s.db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n) == nil && n > 0 {
				continue
			}
			return fmt.Errorf("add column %s.%s: %w", c.table, c.column, err)
		}
	}
	return nil
}

// checkTables takes a quick look at the tables: it catches files that are
// SQLite but not ours.
func (s *Store) checkTables(ctx context.Context) error {
	if _, err := s.db.ExecContext(ctx, "SELECT id, server_id, content_hash FROM tools LIMIT 0"); err != nil {
		return fmt.Errorf("not a tool database: %w", err)
	}
	return nil
}

func (s *Store) fail(op string, err error) error {
	return fmt.Errorf("tool database %s: %s: %w", s.path, op, err)
}

// ReplaceServerTools implements catalog.Store in one transaction.
func (s *Store) ReplaceServerTools(ctx context.Context, srv catalog.Server, tools []catalog.Tool) (changed, deleted []string, err error) {
	now := s.now()
	srv, next, err := writeplan.Prepare(srv, tools, now)
	if err != nil {
		return nil, nil, err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, nil, s.fail("begin", err)
	}
	defer tx.Rollback()

	rows, err := tx.QueryContext(ctx, `SELECT id, content_hash, status FROM tools WHERE server_id = ?`, srv.ID)
	if err != nil {
		return nil, nil, s.fail("read tools of "+srv.ID, err)
	}
	current := map[string]writeplan.Current{}
	for rows.Next() {
		var id, hash, status string
		if err := rows.Scan(&id, &hash, &status); err != nil {
			rows.Close()
			return nil, nil, s.fail("read tools of "+srv.ID, err)
		}
		current[id] = writeplan.Current{ContentHash: hash, Stale: status != catalog.StatusActive}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, s.fail("read tools of "+srv.ID, err)
	}
	d := writeplan.Diff(current, next)

	if _, err := tx.ExecContext(ctx, `INSERT INTO servers (id, title, description, status, last_error, synced_at, extra)
		VALUES (?, ?, ?, ?, '', ?, ?)
		ON CONFLICT(id) DO UPDATE SET title=excluded.title, description=excluded.description,
			status=excluded.status, last_error='', synced_at=excluded.synced_at, extra=excluded.extra`,
		srv.ID, srv.Title, srv.Description, catalog.StatusActive, catalog.FormatTime(srv.SyncedAt), nullJSON(srv.Extra)); err != nil {
		return nil, nil, s.fail("write server "+srv.ID, err)
	}
	if len(d.Write) > 0 {
		stmt, err := tx.PrepareContext(ctx, `INSERT OR REPLACE INTO tools
			(id, server_id, name, title, description, input_schema, annotations, tool_type, permission_scope, tags, status, content_hash, updated_at, extra)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return nil, nil, s.fail("write tools", err)
		}
		defer stmt.Close()
		for _, t := range d.Write {
			var tags any
			if len(t.Tags) > 0 {
				b, _ := json.Marshal(t.Tags)
				tags = string(b)
			}
			if _, err := stmt.ExecContext(ctx, t.ID, t.Server, t.Name, t.Title, t.Description, nullJSON(t.InputSchema),
				nullJSON(t.Annotations), t.ToolType, t.PermissionScope, tags, catalog.StatusActive, t.ContentHash,
				catalog.FormatTime(t.UpdatedAt), nullJSON(t.Extra)); err != nil {
				return nil, nil, s.fail("write tool "+t.ID, err)
			}
		}
	}
	if len(d.Reactivate) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE tools SET status = ? WHERE server_id = ? AND status <> ?`,
			catalog.StatusActive, srv.ID, catalog.StatusActive); err != nil {
			return nil, nil, s.fail("reactivate tools of "+srv.ID, err)
		}
	}
	for _, id := range d.Delete {
		if _, err := tx.ExecContext(ctx, `DELETE FROM tools WHERE id = ?`, id); err != nil {
			return nil, nil, s.fail("delete tool "+id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, nil, s.fail("commit tools of "+srv.ID, err)
	}
	return d.Changed, d.Delete, nil
}

// MarkServerStale implements catalog.Store. A server that never synced is
// recorded as stale with no tools, so its error shows in ListServers.
func (s *Store) MarkServerStale(ctx context.Context, serverID, reason string) error {
	if err := catalog.ValidServerID(serverID); err != nil {
		return err
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `INSERT INTO servers (id, status, last_error) VALUES (?, ?, ?)
		ON CONFLICT(id) DO UPDATE SET status=excluded.status, last_error=excluded.last_error`,
		serverID, catalog.StatusStale, reason); err != nil {
		return s.fail("mark server "+serverID+" stale", err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE tools SET status = ? WHERE server_id = ?`, catalog.StatusStale, serverID); err != nil {
		return s.fail("mark tools of "+serverID+" stale", err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit stale mark of "+serverID, err)
	}
	return nil
}

// DeleteServer implements catalog.Store. Deleting an unknown server is not
// an error.
func (s *Store) DeleteServer(ctx context.Context, serverID string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin", err)
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `DELETE FROM tools WHERE server_id = ?`, serverID); err != nil {
		return s.fail("delete tools of "+serverID, err)
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM servers WHERE id = ?`, serverID); err != nil {
		return s.fail("delete server "+serverID, err)
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit delete of "+serverID, err)
	}
	return nil
}

const toolColumns = `id, server_id, name, title, description, input_schema, annotations, tool_type, permission_scope, tags, status, content_hash, updated_at, extra`

type scanner interface{ Scan(dest ...any) error }

func scanTool(sc scanner) (catalog.Tool, error) {
	var t catalog.Tool
	var schema, ann, tags, extra sql.NullString
	var updated string
	if err := sc.Scan(&t.ID, &t.Server, &t.Name, &t.Title, &t.Description, &schema, &ann, &t.ToolType,
		&t.PermissionScope, &tags, &t.Status, &t.ContentHash, &updated, &extra); err != nil {
		return t, err
	}
	if extra.Valid && extra.String != "" {
		t.Extra = json.RawMessage(extra.String)
	}
	if schema.Valid {
		t.InputSchema = json.RawMessage(schema.String)
	}
	if ann.Valid {
		t.Annotations = json.RawMessage(ann.String)
	}
	if tags.Valid && tags.String != "" {
		if err := json.Unmarshal([]byte(tags.String), &t.Tags); err != nil {
			return t, fmt.Errorf("tool %s: bad tags column: %w", t.ID, err)
		}
	}
	t.UpdatedAt = catalog.ParseTime(updated)
	return t, nil
}

// GetTool implements catalog.Store.
func (s *Store) GetTool(ctx context.Context, id string) (catalog.Tool, error) {
	t, err := scanTool(s.db.QueryRowContext(ctx, `SELECT `+toolColumns+` FROM tools WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return catalog.Tool{}, fmt.Errorf("tool %q: %w", id, catalog.ErrNotFound)
	}
	if err != nil {
		return catalog.Tool{}, s.fail("read tool "+id, err)
	}
	return t, nil
}

// ListTools implements catalog.Store.
func (s *Store) ListTools(ctx context.Context) ([]catalog.Tool, error) {
	return selectAll(ctx, s, "list tools", `SELECT `+toolColumns+` FROM tools ORDER BY id`,
		func(rows *sql.Rows) (catalog.Tool, error) { return scanTool(rows) })
}

// ListServers implements catalog.Store.
func (s *Store) ListServers(ctx context.Context) ([]catalog.Server, error) {
	return selectAll(ctx, s, "list servers", `SELECT id, title, description, status, last_error, synced_at, extra FROM servers ORDER BY id`,
		func(rows *sql.Rows) (catalog.Server, error) {
			var sv catalog.Server
			var synced string
			var extra sql.NullString
			if err := rows.Scan(&sv.ID, &sv.Title, &sv.Description, &sv.Status, &sv.LastError, &synced, &extra); err != nil {
				return sv, err
			}
			if extra.Valid && extra.String != "" {
				sv.Extra = json.RawMessage(extra.String)
			}
			sv.SyncedAt = catalog.ParseTime(synced)
			return sv, nil
		})
}

// selectAll runs query and returns what scan makes of each row; op names
// the read in errors.
func selectAll[T any](ctx context.Context, s *Store, op, query string, scan func(*sql.Rows) (T, error)) ([]T, error) {
	rows, err := s.db.QueryContext(ctx, query)
	if err != nil {
		return nil, s.fail(op, err)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, s.fail(op, err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, s.fail(op, err)
	}
	return out, nil
}

// execEach runs the statement query once for each of n rows (args gives
// the arguments of row i) in one transaction; op names the write in errors.
func (s *Store) execEach(ctx context.Context, op, query string, n int, args func(i int) []any) error {
	if n == 0 {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return s.fail("begin", err)
	}
	defer tx.Rollback()
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return s.fail("prepare "+op, err)
	}
	defer st.Close()
	for i := range n {
		if _, err := st.ExecContext(ctx, args(i)...); err != nil {
			return s.fail(op, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return s.fail("commit "+op, err)
	}
	return nil
}

func nullJSON(raw json.RawMessage) any {
	if len(raw) == 0 {
		return nil
	}
	return string(raw)
}
