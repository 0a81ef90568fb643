package reliability

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"gopkg.in/yaml.v3"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

// syncKeysFor is the admin key of the sync tests, granted every server of
// the registry (a key may not grant a server the registry does not have).
func syncKeysFor(t testing.TB, registry string) string {
	t.Helper()
	var reg struct {
		Servers map[string]any `yaml:"servers"`
	}
	if err := yaml.Unmarshal([]byte(registry), &reg); err != nil {
		t.Fatal(err)
	}
	var grants []string
	for id := range reg.Servers {
		grants = append(grants, id+": {}")
	}
	sort.Strings(grants)
	return "keys:\n  - id: admin\n    secret: \"s-sync-admin\"\n    admin: true\n    servers: {" + strings.Join(grants, ", ") + "}\n"
}

// toolStatus returns tool id → status from the gateway's store.
func toolStatus(t testing.TB, g *local.Runtime) map[string]string {
	t.Helper()
	tools, err := g.Store.ListTools(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, tl := range tools {
		out[tl.ID] = tl.Status
	}
	return out
}

// listNames returns the tools/list names.
func listNames(t testing.TB, c *client.Client) []string {
	t.Helper()
	res, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range res.Tools {
		names = append(names, tl.Name)
	}
	sort.Strings(names)
	return names
}

func has(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// findIDs runs find_tools and returns the call_names found.
func findIDs(t testing.TB, c *client.Client, query string, topK int) (ids []string, fallback bool) {
	t.Helper()
	res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": query, "top_k": topK, "include_schema": false})
	if err != nil || res.IsError {
		t.Fatalf("find_tools %q: %v %q", query, err, testenv.Text(res))
	}
	var out struct {
		Results []struct {
			CallName string `json:"call_name"`
			Status   string `json:"status"`
		} `json:"results"`
		FallbackUsed bool `json:"fallback_used"`
	}
	if err := json.Unmarshal([]byte(testenv.Text(res)), &out); err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Results {
		ids = append(ids, r.CallName)
	}
	return ids, out.FallbackUsed
}

// TestSyncUpstreamDown: an upstream that is down during a resync keeps its
// tools (stale, still listed, findable and attempted when called); when it
// comes back the next resync marks them active again.
func TestSyncUpstreamDown(t *testing.T) {
	url, stop := testenv.StartEchoAt(t, "127.0.0.1:0")
	reg := "servers:\n" + stdioEntry(t, "echo", "") +
		fmt.Sprintf("  web:\n    transport: streamable_http\n    url: %s\n", url)
	g := startGateway(t, gwOpts{Registry: reg, Keys: syncKeysFor(t, reg), Env: map[string]string{"TOOL_RAG_SYNC_TIMEOUT": "5"}})
	c := connect(t, g.url, "s-sync-admin", false, nil)
	ctx := context.Background()
	if st := toolStatus(t, g.g); st["web__echo"] != catalog.StatusActive || len(st) != 10 {
		t.Fatalf("after the first sync: %v", st)
	}

	stop()
	rep, err := g.g.Sync(ctx, indexer.ModeIncremental)
	if err != nil {
		t.Fatalf("resync with an upstream down must not fail: %v", err)
	}
	if _, stale := rep.Stale["web"]; !stale || rep.Synced != 1 {
		t.Fatalf("resync report: %+v, want web stale and echo synced", rep)
	}
	st := toolStatus(t, g.g)
	for _, name := range []string{"echo", "add", "reverse", "sleep", "fail"} {
		if st["web__"+name] != catalog.StatusStale {
			t.Errorf("web__%s: status %q, want stale (kept, not deleted)", name, st["web__"+name])
		}
		if st["echo__"+name] != catalog.StatusActive {
			t.Errorf("echo__%s: status %q, want active", name, st["echo__"+name])
		}
	}
	if names := listNames(t, c); !has(names, "web__echo") {
		t.Errorf("tools/list lost the stale server's tools: %v", names)
	}
	if ids, _ := findIDs(t, c, "reverse the characters of a text", 50); !has(ids, "web__reverse") {
		t.Errorf("find_tools lost the stale server's tools: %v", ids)
	}
	res, err := testenv.CallTool(c, 30*time.Second, "describe_tool", map[string]any{"call_name": "web__echo"})
	if err != nil || res.IsError || !strings.Contains(testenv.Text(res), `"status":"stale"`) {
		t.Errorf("describe_tool of a stale tool: %v %q", err, testenv.Text(res))
	}
	res, err = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "web__echo", "arguments": map[string]any{"text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), `upstream "web"`) || strings.Contains(testenv.Text(res), "not found") {
		t.Errorf("a stale tool's call must be attempted and fail on the upstream: %v %q", err, testenv.Text(res))
	}

	testenv.StartEchoAt(t, strings.TrimSuffix(strings.TrimPrefix(url, "http://"), "/mcp")) // back on the same address
	rep, err = g.g.Sync(ctx, indexer.ModeIncremental)
	if err != nil || len(rep.Stale) != 0 || rep.Synced != 2 {
		t.Fatalf("resync after the upstream came back: %+v %v", rep, err)
	}
	for id, s := range toolStatus(t, g.g) {
		if s != catalog.StatusActive {
			t.Errorf("%s: status %q after the upstream came back", id, s)
		}
	}
	res, err = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "web__echo", "arguments": map[string]any{"text": "back"}})
	if err != nil || res.IsError || testenv.Text(res) != "back" {
		t.Errorf("call after the upstream came back: %v %q", err, testenv.Text(res))
	}
}

// TestSyncPurgesRemovedServer: a server dropped from the registry is purged
// from the store, the index and every surface at the next sync.
func TestSyncPurgesRemovedServer(t *testing.T) {
	dir := t.TempDir()
	both := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "other", "")
	first := startGateway(t, gwOpts{Dir: dir, Registry: both, Keys: syncKeysFor(t, both)})
	if n := len(toolStatus(t, first.g)); n != 10 {
		t.Fatalf("first gateway: %d tools, want 10", n)
	}
	first.srv.Close()
	first.g.Close()

	one := "servers:\n" + stdioEntry(t, "echo", "")
	second := startGateway(t, gwOpts{Dir: dir, Registry: one, Keys: syncKeysFor(t, one), NoSync: true})
	rep, err := second.g.Sync(context.Background(), indexer.ModeIncremental)
	if err != nil || len(rep.Removed) != 1 || rep.Removed[0] != "other" {
		t.Fatalf("sync after removing other: %+v %v", rep, err)
	}
	st := toolStatus(t, second.g)
	for id := range st {
		if strings.HasPrefix(id, "other__") {
			t.Errorf("%s is still in the store", id)
		}
	}
	if len(st) != 5 {
		t.Errorf("store: %v, want the 5 echo tools", st)
	}
	if n := second.g.Indexer.Stats().ToolsInIndex; n != 5 {
		t.Errorf("index holds %d tools, want 5", n)
	}
	c := connect(t, second.url, "s-sync-admin", false, nil)
	for _, name := range listNames(t, c) {
		if strings.HasPrefix(name, "other__") {
			t.Errorf("tools/list still shows %s", name)
		}
	}
	if ids, _ := findIDs(t, c, "reverse the characters of a text", 50); len(ids) != 5 {
		t.Errorf("find_tools: %v, want only the 5 echo tools", ids)
	}
	res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "other__echo", "arguments": map[string]any{"text": "x"}})
	if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "not found") {
		t.Errorf("call of a purged tool: %v %q", err, testenv.Text(res))
	}
	if code, _, body := httpDo(t, nil, "GET", second.base+"/tool-rag/tool/other__echo", "s-sync-admin", "", nil); code != 404 {
		t.Errorf("GET purged tool: %d %s", code, body)
	}
}

// gatedServer is an in-process Streamable HTTP MCP server whose tools/list
// can be held open, to interrupt a sync halfway.
type gatedServer struct {
	s   *server.MCPServer
	url string

	mu      sync.Mutex
	armed   bool
	entered chan struct{} // closed when a held tools/list arrives
	release chan struct{} // close to let it answer
}

func newGatedServer(t testing.TB) *gatedServer {
	g := &gatedServer{}
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(ctx context.Context, _ any, _ *mcp.ListToolsRequest) {
		g.mu.Lock()
		if !g.armed {
			g.mu.Unlock()
			return
		}
		g.armed = false
		entered, release := g.entered, g.release
		g.mu.Unlock()
		close(entered)
		select {
		case <-release:
		case <-ctx.Done():
		case <-time.After(time.Minute):
		}
	})
	g.s = server.NewMCPServer("slow", "1.0.0", server.WithToolCapabilities(false), server.WithHooks(hooks))
	g.addTool("alpha", "Look up the alpha registry of widgets.")
	srv := httptest.NewServer(server.NewStreamableHTTPServer(g.s))
	t.Cleanup(srv.Close)
	g.url = srv.URL + "/mcp"
	return g
}

func (g *gatedServer) addTool(name, desc string) {
	g.s.AddTool(mcp.NewTool(name, mcp.WithDescription(desc), mcp.WithString("q")),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText(name + " ok"), nil
		})
}

// arm holds the next tools/list until the returned release is called.
func (g *gatedServer) arm() (entered <-chan struct{}, release func()) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.armed = true
	g.entered = make(chan struct{})
	g.release = make(chan struct{})
	var once sync.Once
	rel := g.release
	return g.entered, func() { once.Do(func() { close(rel) }) }
}

func waitFor(t testing.TB, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

// TestSyncInterrupted cancels a sync while one upstream's tools/list is in
// flight: the sync reports the interruption, the previous index, catalog
// statuses and MCP surface stay in force, and the next sync completes.
func TestSyncInterrupted(t *testing.T) {
	slow := newGatedServer(t)
	reg := "servers:\n" + stdioEntry(t, "echo", "") +
		fmt.Sprintf("  slow:\n    transport: streamable_http\n    url: %s\n", slow.url)
	g := startGateway(t, gwOpts{Registry: reg, Keys: syncKeysFor(t, reg)})
	c := connect(t, g.url, "s-sync-admin", false, nil)
	_, metaBefore, ok := g.g.Indexer.Current()
	if !ok || metaBefore.Count != 6 {
		t.Fatalf("initial index: ok=%v count=%d, want 6 tools", ok, metaBefore.Count)
	}

	slow.addTool("fresh", "Brand new tool that renders quarterly zebra reports.")
	entered, release := slow.arm()
	defer release()
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := g.g.Sync(ctx, indexer.ModeIncremental)
		errc <- err
	}()
	waitFor(t, entered, "the sync to reach the slow upstream")
	cancel()
	var err error
	select {
	case err = <-errc:
	case <-time.After(30 * time.Second):
		t.Fatal("a cancelled sync did not return")
	}
	release()
	if err == nil {
		t.Fatal("an interrupted sync reported success")
	}
	t.Logf("interrupted sync: %v", err)

	_, metaAfter, ok := g.g.Indexer.Current()
	if !ok || metaAfter.IndexSHA256 != metaBefore.IndexSHA256 || metaAfter.Count != 6 {
		t.Errorf("the interrupted sync replaced the index: %d tools (sha %s → %s)", metaAfter.Count, metaBefore.IndexSHA256, metaAfter.IndexSHA256)
	}
	for id, s := range toolStatus(t, g.g) {
		if s != catalog.StatusActive {
			t.Errorf("%s: status %q after an interrupted sync; cancelling must not mark reachable servers stale", id, s)
		}
	}
	if names := listNames(t, c); has(names, "slow__fresh") || !has(names, "slow__alpha") {
		t.Errorf("tools/list after the interrupted sync: %v", names)
	}
	if ids, fallback := findIDs(t, c, "quarterly zebra reports", 3); has(ids, "slow__fresh") || fallback {
		t.Errorf("find_tools after the interrupted sync: %v fallback=%v", ids, fallback)
	}

	rep, err := g.g.Sync(context.Background(), indexer.ModeIncremental)
	if err != nil || rep.Synced != 2 {
		t.Fatalf("next sync: %+v %v", rep, err)
	}
	if names := listNames(t, c); !has(names, "slow__fresh") {
		t.Errorf("tools/list after the next sync lacks slow__fresh: %v", names)
	}
	if ids, _ := findIDs(t, c, "quarterly zebra reports", 3); len(ids) == 0 || ids[0] != "slow__fresh" {
		t.Errorf("find_tools after the next sync: %v", ids)
	}
	if n := g.g.Indexer.Stats().ToolsInIndex; n != 7 {
		t.Errorf("index holds %d tools after the next sync, want 7", n)
	}
}

// TestSyncSubprocessKilled SIGKILLs a `toolrag sync` process while it waits
// on an upstream: the store and the published index on disk stay readable,
// a new gateway over them serves the previous index, and its next sync
// completes.
func TestSyncSubprocessKilled(t *testing.T) {
	bin := toolragBin(t)
	slow := newGatedServer(t)
	dir := t.TempDir()
	reg := "servers:\n" + stdioEntry(t, "echo", "") +
		fmt.Sprintf("  slow:\n    transport: streamable_http\n    url: %s\n", slow.url)
	writeFile(t, filepath.Join(dir, "registry.yaml"), reg)
	writeFile(t, filepath.Join(dir, "keys.yaml"), syncKeysFor(t, reg))
	env := gatewayEnv(dir)
	cmdEnv := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME"), "TOOLRAG_LOG_LEVEL=warn"}
	for k, v := range env {
		cmdEnv = append(cmdEnv, k+"="+v)
	}
	sync := func() *exec.Cmd {
		cmd := exec.Command(bin, "sync", "--mode", "full")
		cmd.Env = cmdEnv
		return cmd
	}
	if out, err := sync().CombinedOutput(); err != nil {
		t.Fatalf("first toolrag sync: %v\n%s", err, out)
	}

	slow.addTool("fresh", "Brand new tool that renders quarterly zebra reports.")
	entered, release := slow.arm()
	defer release()
	cmd := sync()
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, entered, "toolrag sync to reach the slow upstream")
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil {
		t.Fatalf("killed toolrag sync exited cleanly: %s", out.String())
	}
	release()

	log := slog.New(slog.DiscardHandler)
	g, err := local.New(context.Background(), local.Options{Getenv: func(k string) string { return env[k] }, Logger: log})
	if err != nil {
		t.Fatalf("a new gateway over the killed sync's data: %v", err)
	}
	defer g.Close()
	if _, err := g.Indexer.Build(context.Background(), indexer.ModeOff); err != nil {
		t.Fatalf("loading the persisted index after the kill: %v", err)
	}
	if _, meta, ok := g.Indexer.Current(); !ok || meta.Count != 6 {
		t.Fatalf("persisted index after the kill: ok=%v count=%d, want the previous 6 tools", ok, meta.Count)
	}
	st := toolStatus(t, g)
	if len(st) != 6 || st["slow__alpha"] != catalog.StatusActive {
		t.Errorf("store after the kill: %v", st)
	}
	rep, err := g.Sync(context.Background(), indexer.ModeIncremental)
	if err != nil || rep.Synced != 2 {
		t.Fatalf("sync after the kill: %+v %v", rep, err)
	}
	if n := g.Indexer.Stats().ToolsInIndex; n != 7 {
		t.Errorf("index holds %d tools after the next sync, want 7", n)
	}
}
