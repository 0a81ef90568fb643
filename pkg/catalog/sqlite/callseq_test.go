package sqlite

import (
	"database/sql"

	"context"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/callseq/callseqtest"
)

func TestCallSequenceStore(t *testing.T) {
	callseqtest.Run(t, func(t *testing.T) callseq.Store {
		s, err := Open(context.Background(), filepath.Join(t.TempDir(), "cat.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// A catalog written by the previous schema (version 1) is migrated: its
// tools are kept and the call-sequence table is there. A foreign file at
// version 1 is refused before any migration touches it.
func TestCallSequenceMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "v1.db")
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "web"}, []catalog.Tool{{ID: "web__navigate", Server: "web", Name: "navigate"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.Exec("DROP TABLE call_sequences; PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if tools, err := s.ListTools(ctx); err != nil || len(tools) != 1 {
		t.Fatalf("tools after the migration: %v, %v", tools, err)
	}
	if err := s.AddCallSequences(ctx, []callseq.Count{{From: "web__navigate", To: "web__screenshot", N: 1, Day: 1}}); err != nil {
		t.Fatalf("the migrated file has no call-sequence table: %v", err)
	}

	foreign := filepath.Join(t.TempDir(), "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE other (x TEXT); PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(ctx, foreign); err == nil {
		f.Close()
		t.Fatal("a foreign file opened")
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM sqlite_master WHERE name = 'call_sequences'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the foreign file was migrated (%d call_sequences tables, %v)", n, err)
	}
	db.Close()
}
