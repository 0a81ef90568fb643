package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/storetest"
)

func openTemp(t testing.TB) *Store {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "tools.db"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) catalog.Store { return openTemp(t) })
}

func TestReopenKeepsData(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "sub dir?#%", "tools.db")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	tools := storetest.Tools("alpha", "t", 5, "tool")
	if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: "alpha"}, tools); err != nil {
		t.Fatal(err)
	}
	if err := s.MarkServerStale(ctx, "alpha", "down"); err != nil {
		t.Fatal(err)
	}
	if s.SizeBytes() <= 0 {
		t.Fatalf("SizeBytes = %d", s.SizeBytes())
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the path given (special characters in the folder name): %v", err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 5 || got[0].Status != catalog.StatusStale {
		t.Fatalf("after reopen: %d tools, first %+v", len(got), got)
	}
	var mode string
	if err := s2.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Fatalf("journal_mode = %q, %v; want wal", mode, err)
	}
}

func TestBadFiles(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.db")
	content := bytes.Repeat([]byte("this is not a sqlite database\n"), 200)
	if err := os.WriteFile(garbage, content, 0o644); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(dir, "foreign.db")
	db, err := sql.Open("sqlite", foreign)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE other (x TEXT); PRAGMA user_version = 1"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	future := filepath.Join(dir, "future.db")
	db, err = sql.Open("sqlite", future)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(fmt.Sprintf("PRAGMA user_version = %d", SchemaVersion+5)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	tests := []struct {
		name, path, want string
	}{
		{"not sqlite", garbage, "not a database"},
		{"directory", dir, "is a directory"},
		{"other schema", foreign, "not a tool database"},
		{"newer schema", future, "newer than this program"},
		{"missing folder", filepath.Join(dir, "no", "such", "dir", "x.db"), "x.db"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Open(context.Background(), tt.path)
			if err == nil {
				s.Close()
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), tt.path) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q should name %s and say %q", err, tt.path, tt.want)
			}
		})
	}
	if b, _ := os.ReadFile(garbage); !bytes.Equal(b, content) {
		t.Fatal("opening a non-database file modified it")
	}
}

func TestMigrationSetsVersion(t *testing.T) {
	s := openTemp(t)
	defer s.Close()
	var v int
	if err := s.db.QueryRow("PRAGMA user_version").Scan(&v); err != nil || v != SchemaVersion {
		t.Fatalf("user_version = %d, %v; want %d", v, err, SchemaVersion)
	}
}

// Two handles on one file (two gateway processes) write concurrently: WAL,
// busy_timeout and IMMEDIATE transactions serialize them without errors.
func TestTwoHandlesOneFile(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "shared.db")
	a, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var wg sync.WaitGroup
	errs := make(chan error, 20)
	for i, s := range []*Store{a, b, a, b} {
		wg.Add(1)
		go func(i int, s *Store) {
			defer wg.Done()
			for round := 0; round < 5; round++ {
				id := fmt.Sprintf("srv%d", i)
				if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: id}, storetest.Tools(id, "t", 20+round, "r")); err != nil {
					errs <- err
				}
				if _, err := s.ListTools(ctx); err != nil {
					errs <- err
				}
			}
		}(i, s)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got, err := b.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 4*24 {
		t.Fatalf("got %d tools, want %d", len(got), 4*24)
	}
}

func newBenchStore(b *testing.B) catalog.Store { return openTemp(b) }

func BenchmarkReplaceServerTools(b *testing.B) {
	storetest.BenchmarkReplaceServerTools(b, newBenchStore)
}

func BenchmarkGetTool(b *testing.B) { storetest.BenchmarkGetTool(b, newBenchStore) }

func BenchmarkListTools3000(b *testing.B) {
	s := openTemp(b)
	defer s.Close()
	ctx := context.Background()
	for i := 0; i < 10; i++ {
		id := fmt.Sprintf("srv%d", i)
		if _, _, err := s.ReplaceServerTools(ctx, catalog.Server{ID: id}, storetest.Tools(id, "tool", 300, "a tool")); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if got, err := s.ListTools(ctx); err != nil || len(got) != 3000 {
			b.Fatal(len(got), err)
		}
	}
}
