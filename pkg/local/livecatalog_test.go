package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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
