package eval

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog/sqlite"
)

// TestMCPSourceMatchesDirect loads the synthetic catalog through real
// in-process MCP servers and the gateway's sync, and checks it stores the
// same records (ids, content hashes, server descriptions) as writing the
// dataset directly.
func TestMCPSourceMatchesDirect(t *testing.T) {
	ctx := context.Background()
	ds, err := LoadDataset(synthetic)
	if err != nil {
		t.Fatal(err)
	}
	load := func(src Source) *sqlite.Store {
		st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "c.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		if err := src.Load(ctx, ds, st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	direct, viaMCP := load(DirectSource{}), load(MCPSource{})
	a, _ := direct.ListTools(ctx)
	b, _ := viaMCP.ListTools(ctx)
	if len(a) != len(ds.Tools) || len(a) != len(b) {
		t.Fatalf("tools: direct %d, mcp %d, dataset %d", len(a), len(b), len(ds.Tools))
	}
	for i := range a {
		if a[i].ID != b[i].ID || a[i].ContentHash != b[i].ContentHash || a[i].Status != "active" {
			t.Errorf("tool %d: direct %s %s, mcp %s %s", i, a[i].ID, a[i].ContentHash, b[i].ID, b[i].ContentHash)
		}
	}
	sa, _ := direct.ListServers(ctx)
	sb, _ := viaMCP.ListServers(ctx)
	if len(sa) != len(sb) {
		t.Fatalf("servers: %d vs %d", len(sa), len(sb))
	}
	for i := range sa {
		if sa[i].ID != sb[i].ID || sa[i].Description != sb[i].Description {
			t.Errorf("server %s: description %q via MCP, %q direct", sa[i].ID, sb[i].Description, sa[i].Description)
		}
	}
}
