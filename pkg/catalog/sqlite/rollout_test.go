package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/storetest"
)

// What the previous release (before catalog.Tool.Extra) does with the
// database, as its code has it: the schema version it accepts, the check
// of a file it opens, the columns it reads and the statement it writes.
const (
	prevSchemaVersion = 2
	prevCheck         = `SELECT id, server_id, content_hash FROM tools LIMIT 0`
	prevToolColumns   = `id, server_id, name, title, description, input_schema, annotations, tool_type, permission_scope, tags, status, content_hash, updated_at`
	prevServerSelect  = `SELECT id, title, description, status, last_error, synced_at FROM servers ORDER BY id`
	prevToolInsert    = `INSERT OR REPLACE INTO tools
			(id, server_id, name, title, description, input_schema, annotations, tool_type, permission_scope, tags, status, content_hash, updated_at)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`
	prevServerInsert = `INSERT INTO servers (id, title, description, status, last_error, synced_at)
		VALUES (?, ?, ?, ?, '', ?)
		ON CONFLICT(id) DO UPDATE SET title=excluded.title, description=excluded.description,
			status=excluded.status, last_error='', synced_at=excluded.synced_at`
)

// TestFidelityStoreReadableByPreviousRelease: during a rollout, a database
// this release wrote (tools with Extra) is opened, read and written by the
// previous release's statements, and a database the previous release
// wrote is opened and read by this one.
func TestFidelityStoreReadableByPreviousRelease(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "tools.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tool := storetest.Tool("wx", "forecast", "Weather forecast")
	tool.Extra = json.RawMessage(`{"outputSchema":{"type":"object"},"_meta":{"ui":{"resourceUri":"ui://wx/v.html"}},"futureField":1}`)
	catalog.Finalize(&tool)
	if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "wx", Title: "Weather", Extra: json.RawMessage(`{"instructions":"x"}`)}, []catalog.Tool{tool}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// The previous release on the file this one wrote.
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	var version int
	if err := db.QueryRow("PRAGMA user_version").Scan(&version); err != nil || version > prevSchemaVersion {
		t.Fatalf("user_version = %d (%v): the previous release refuses a schema newer than %d", version, err, prevSchemaVersion)
	}
	if _, err := db.Exec(prevCheck); err != nil {
		t.Fatalf("the previous release's check of the file: %v", err)
	}
	var id, srv, name, title, desc, ttype, scope, status, hash, updated string
	var schema, ann, tags sql.NullString
	if err := db.QueryRow(`SELECT `+prevToolColumns+` FROM tools WHERE id = ?`, tool.ID).Scan(&id, &srv, &name, &title, &desc,
		&schema, &ann, &ttype, &scope, &tags, &status, &hash, &updated); err != nil {
		t.Fatalf("the previous release's read of a tool: %v", err)
	}
	if name != tool.Name || desc != tool.Description || schema.String != string(tool.InputSchema) || ann.String != string(tool.Annotations) {
		t.Errorf("the previous release reads %q %q %q %q", name, desc, schema.String, ann.String)
	}
	rows, err := db.Query(prevServerSelect)
	if err != nil {
		t.Fatalf("the previous release's read of the servers: %v", err)
	}
	rows.Close()
	// Its sync writes as it always did (Extra left NULL).
	if _, err := db.Exec(prevServerInsert, "wx", "Weather", "", catalog.StatusActive, ""); err != nil {
		t.Fatalf("the previous release's write of a server: %v", err)
	}
	old := storetest.Tool("wx", "tides", "Tide tables")
	if _, err := db.Exec(prevToolInsert, old.ID, old.Server, old.Name, old.Title, old.Description, string(old.InputSchema),
		string(old.Annotations), old.ToolType, old.PermissionScope, `["t1","t2"]`, catalog.StatusActive, old.ContentHash, updated); err != nil {
		t.Fatalf("the previous release's write of a tool: %v", err)
	}
	db.Close()

	// This release reads both: its own with Extra, the other's without.
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got, err := s.GetTool(ctx, tool.ID)
	if err != nil || string(got.Extra) != string(tool.Extra) {
		t.Errorf("this release's tool after the previous release's sync: %v %s", err, got.Extra)
	}
	if got, err := s.GetTool(ctx, old.ID); err != nil || got.Extra != nil || got.Description != old.Description {
		t.Errorf("the previous release's tool read by this one: %v %+v", err, got)
	}

	// A database the previous release created (no extra columns) opens.
	prev := filepath.Join(t.TempDir(), "prev.db")
	db, err = sql.Open("sqlite", prev)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range migrations[:prevSchemaVersion] {
		if _, err := db.Exec(m); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.Exec("PRAGMA user_version = 2"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(prevServerInsert, "wx", "Weather", "", catalog.StatusActive, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(prevToolInsert, old.ID, old.Server, old.Name, old.Title, old.Description, string(old.InputSchema),
		string(old.Annotations), old.ToolType, old.PermissionScope, `["t1","t2"]`, catalog.StatusActive, old.ContentHash, updated); err != nil {
		t.Fatal(err)
	}
	db.Close()
	s2, err := Open(ctx, prev)
	if err != nil {
		t.Fatalf("this release opening the previous release's database: %v", err)
	}
	defer s2.Close()
	if got, err := s2.GetTool(ctx, old.ID); err != nil || got.Name != old.Name {
		t.Errorf("the previous release's database read by this one: %v %+v", err, got)
	}
}
