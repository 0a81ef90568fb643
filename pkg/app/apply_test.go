package app_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/app"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/index/indexpub"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// countingStore counts the full reads of a real SQLite catalog.
type countingStore struct {
	*sqlite.Store
	tools, servers atomic.Int64
}

func (c *countingStore) ListTools(ctx context.Context) ([]catalog.Tool, error) {
	c.tools.Add(1)
	return c.Store.ListTools(ctx)
}

func (c *countingStore) ListServers(ctx context.Context) ([]catalog.Server, error) {
	c.servers.Add(1)
	return c.Store.ListServers(ctx)
}

// One Apply reads the store once and hands that copy to the indexer, the
// retriever and the MCP server. (Before pkg/app, a local sync read SQLite
// three times: the retriever, the indexer and the MCP tool list each
// listed the catalog.)
func TestApplyReadsTheStoreOnce(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	sq := textStore(t, dir)
	st := &countingStore{Store: sq}
	env, err := config.FromEnv(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	env.WithoutAuth = true
	up := upstream.NewManager(env.UpstreamOptions(nil))
	defer up.Close()
	a, err := app.New(app.Backend{Runtime: "test", Catalog: st, Sessions: session.NewMemory(), Upstreams: up,
		Embedder: embed.NewBuiltin(), Index: indexpub.NewDirBucket(filepath.Join(dir, "index"))},
		app.Options{Env: env, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	if a.Ready() {
		t.Fatal("ready before any catalog was applied")
	}
	res, err := a.Apply(ctx, app.Change{Index: indexer.ModeFull})
	if err != nil || res.IndexErr != nil {
		t.Fatal(err, res.IndexErr)
	}
	if n, m := st.tools.Load(), st.servers.Load(); n != 1 || m != 1 {
		t.Errorf("one Apply listed the tools %d times and the servers %d times, want once each", n, m)
	}
	if !a.Ready() || a.Catalog.Len() != 2 || res.Index.Tools != 2 || a.Indexer.Stats().ToolsInIndex != 2 {
		t.Errorf("after Apply: ready %v, copy %d tools, index %+v", a.Ready(), a.Catalog.Len(), res.Index)
	}
	if tools, stale := a.MCP.CatalogCounts(); tools != 2 || stale != 0 {
		t.Errorf("MCP tool list: %d tools, %d stale", tools, stale)
	}
	resp, err := a.Retriever.Retrieve(ctx, retrieve.Request{Query: "reverse a string", TopK: 1, Policy: policy.Unrestricted()})
	if err != nil || len(resp.Results) != 1 || resp.Results[0].Tool.ID != "text__reverse" {
		t.Fatalf("retrieve after Apply: %+v %v", resp, err)
	}
	if n := st.tools.Load(); n != 1 {
		t.Errorf("a retrieval read the store again (%d reads in all)", n)
	}
}

// textStore is a real SQLite catalog in dir with two tools of server
// "text" (reverse, upper); it is closed with the test.
func textStore(t *testing.T, dir string) *sqlite.Store {
	t.Helper()
	ctx := context.Background()
	sq, err := sqlite.Open(ctx, filepath.Join(dir, "tools.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sq.Close() })
	tools := []catalog.Tool{
		{Server: "text", Name: "reverse", Description: "Reverse the characters of a string."},
		{Server: "text", Name: "upper", Description: "Convert a string to upper case."},
	}
	for i := range tools {
		catalog.Finalize(&tools[i])
	}
	if _, _, err := sq.ReplaceServerTools(ctx, catalog.Server{ID: "text"}, tools); err != nil {
		t.Fatal(err)
	}
	return sq
}
