package gateway

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
)

// tempCatalog is an empty SQLite catalog in the test's temporary
// directory, closed when the test ends.
func tempCatalog(tb testing.TB) *sqlite.Store {
	tb.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(tb.TempDir(), "c.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return st
}

// putTools makes tools, finalized and stamped now, the whole catalog of
// the active server srv.
func putTools(tb testing.TB, st *sqlite.Store, srv string, tools ...catalog.Tool) {
	tb.Helper()
	for i := range tools {
		tools[i].UpdatedAt = time.Now()
		catalog.Finalize(&tools[i])
	}
	if _, _, err := st.ReplaceServerTools(context.Background(), catalog.Server{ID: srv, Status: catalog.StatusActive}, tools); err != nil {
		tb.Fatal(err)
	}
}
