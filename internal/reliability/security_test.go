package reliability

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/indexer"
)

// TestHostileToolList: an upstream whose tools/list is huge (50,000 tools
// in one page) or never ends (a new cursor on every page) is cut at the
// gateway's limits (TOOL_RAG_MAX_TOOLS_PER_SERVER, default 2,000;
// TOOL_RAG_MAX_TOOL_PAGES, default 100): the sync keeps the first tools,
// reports the server degraded with the reason (in the sync report and
// /tool-rag/health), the other servers sync normally, and the gateway's
// heap stays bounded. Before the limits, the endless list ran until the
// sync timeout and the server's tools were lost as stale; the 50k list was
// stored and indexed whole.
func TestHostileToolList(t *testing.T) {
	cases := []struct {
		name      string
		page      string
		wantTools int
		reason    string
	}{
		{"50k tools in one page", "50000", 2000, "lists more than 2000 tools (TOOL_RAG_MAX_TOOLS_PER_SERVER)"},
		{"endless pages", "10", 1000, "has more than 100 pages (TOOL_RAG_MAX_TOOL_PAGES)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			reg := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "flood", "", "-misbehave=flood-tools", "-flood-page="+tc.page)
			keys := "keys:\n  - id: admin\n    secret: \"s-flood-admin\"\n    admin: true\n    servers: {echo: {}, flood: {}}\n"
			g := startGateway(t, gwOpts{Registry: reg, Keys: keys, NoSync: true, Env: map[string]string{"TOOL_RAG_SYNC_TIMEOUT": "20"}})
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			rep, err := g.g.Sync(context.Background(), indexer.ModeFull)
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			if rep.Synced != 2 || len(rep.Stale) != 0 {
				t.Errorf("sync report: %+v (want both servers synced, none stale)", rep)
			}
			if got := rep.Degraded["flood"]; !strings.Contains(got, tc.reason) {
				t.Errorf("degraded reason %q, want it to contain %q", got, tc.reason)
			}
			n := 0
			for id := range toolStatus(t, g.g) {
				if strings.HasPrefix(id, "flood__") {
					n++
				}
			}
			if n != tc.wantTools {
				t.Errorf("flood tools in the catalog: %d, want %d", n, tc.wantTools)
			}
			code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/health", "s-flood-admin", "", nil)
			if code != 200 || !strings.Contains(body, `"degraded"`) || !strings.Contains(body, "TOOL_RAG_") {
				t.Errorf("health does not report the degraded server: %d %s", code, body)
			}
			grew := int64(after.HeapAlloc) - int64(before.HeapAlloc)
			t.Logf("heap after sync grew by %.1f MB", float64(grew)/(1<<20))
			if grew > 256<<20 {
				t.Errorf("heap grew by %d MB over one sync of a hostile upstream", grew>>20)
			}
		})
	}
}
