package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestFidelityLiveCatalog: a tool an upstream adds while running, announced
// with notifications/tools/list_changed, is found by find_tools within 5 s
// with no scheduled sync, and a connected client is told its list changed.
func TestFidelityLiveCatalog(t *testing.T) {
	grow := filepath.Join(t.TempDir(), "grow")
	reg := fmt.Sprintf("  grower:\n    transport: stdio\n    command: %q\n    args: [\"-grow-file\", %q]\n", echoServer(t), grow)
	e := startGateway(t, reg, nil) // TOOL_RAG_RESYNC_INTERVAL unset: no scheduled sync
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	e.g.Background(ctx)
	c, notes := connect(t, e.url, "k-live", true)

	find := func() bool {
		res, err := testenv.CallTool(c, 10*time.Second, "find_tools", map[string]any{"query": "tide height forecast at a harbour", "top_k": 5})
		if err != nil {
			t.Fatalf("find_tools: %v", err)
		}
		return strings.Contains(testenv.Text(res), "grower__tide_forecast")
	}
	if find() {
		t.Fatal("find_tools found grower__tide_forecast before the server added it")
	}
	for len(notes) > 0 { // what came before the change
		<-notes
	}
	if err := os.WriteFile(grow, []byte("tide_forecast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for !find() {
		if time.Now().After(deadline) {
			t.Fatal("find_tools did not find the tool the upstream added within 5 s of its list_changed")
		}
		time.Sleep(100 * time.Millisecond)
	}
	res, err := testenv.CallTool(c, 10*time.Second, "grower__tide_forecast", map[string]any{"harbour": "Brest"})
	if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "tide at Brest") {
		t.Errorf("calling the added tool: %v %+v", err, res)
	}
	got := false
	for !got {
		select {
		case n := <-notes:
			got = n.Method == "notifications/tools/list_changed"
		case <-time.After(5 * time.Second):
			t.Fatal("the connected client got no notifications/tools/list_changed")
		}
	}
}

// TestFidelityLiveCatalogDamping: a server that announces changes in a
// loop is synced at most max times per window, then ignored and reported.
func TestFidelityLiveCatalogDamping(t *testing.T) {
	var syncs atomic.Int32
	done := make(chan struct{}, 100)
	l := newLiveCatalog(slog.New(slog.NewTextHandler(io.Discard, nil)), func(ctx context.Context, server string) error {
		syncs.Add(1)
		done <- struct{}{}
		return nil
	})
	l.debounce, l.max, l.window = time.Millisecond, 3, time.Hour
	ctx := context.Background()
	for i := 0; i < 3; i++ {
		l.announce(ctx, "loopy", "notifications/tools/list_changed")
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("announcement %d was not synced", i+1)
		}
	}
	for i := 0; i < 10; i++ {
		l.announce(ctx, "loopy", "notifications/tools/list_changed")
	}
	time.Sleep(50 * time.Millisecond)
	if n := syncs.Load(); n != 3 {
		t.Errorf("a server announcing in a loop was synced %d times, want 3", n)
	}
	rep := l.report()
	if !strings.Contains(rep["loopy"], "ignored") {
		b, _ := json.Marshal(rep)
		t.Errorf("damped server not reported: %s", b)
	}
	// Another server is not affected.
	l.announce(ctx, "calm", "notifications/prompts/list_changed")
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Error("another server's announcement was not synced")
	}
}

// TestFidelityListCaps: prompt and resource lists are capped like tool
// lists (TOOL_RAG_MAX_TOOLS_PER_SERVER), and the server is reported.
func TestFidelityListCaps(t *testing.T) {
	reg := fmt.Sprintf("  echoalias:\n    transport: stdio\n    command: %q\n    args: [\"-alias\", \"shout\"]\n", echoServer(t))
	e := startGateway(t, reg, map[string]string{"TOOL_RAG_MAX_TOOLS_PER_SERVER": "1"})
	d := e.g.MCP.ListsDegraded()
	if !strings.Contains(d["echoalias"], "2 prompts") {
		t.Errorf("a server with 2 prompts over a cap of 1 is not reported degraded: %v", d)
	}
	if _, ok := d["echo"]; ok {
		t.Errorf("a server within the cap is reported degraded: %v", d)
	}
	c, _ := connect(t, e.url, "k-alias", true)
	pl, err := c.ListPrompts(context.Background(), mcp.ListPromptsRequest{})
	if err != nil || len(pl.Prompts) != 1 {
		t.Errorf("prompts/list over a cap of 1: %v %+v", err, pl)
	}
}
