package bridge

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// directManager reaches the same stdio server without the bridge, to
// compare with what the bridge serves.
func directManager(t testing.TB, cfg upstream.ServerConfig) *upstream.Manager {
	t.Helper()
	m := upstream.NewManager(upstream.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), StdioPoolSize: 1})
	cfg.Transport = upstream.TransportStdio
	m.SetServers(map[string]upstream.ServerConfig{"direct": cfg})
	t.Cleanup(func() { m.Close() })
	return m
}

// sameJSON fails unless a and b marshal to the same JSON.
func sameJSON(t testing.TB, what string, a, b any) {
	t.Helper()
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	if err1 != nil || err2 != nil {
		t.Fatalf("%s: marshal: %v %v", what, err1, err2)
	}
	if string(ja) != string(jb) {
		t.Errorf("%s differ:\nbridge: %s\ndirect: %s", what, ja, jb)
	}
}

// TestEverything serves @modelcontextprotocol/server-everything: the
// bridge's lists equal the server's own, and tools, prompts, resources,
// environment and concurrency work through it.
func TestEverything(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	t.Setenv("BRIDGE_TEST_INHERITED", "inherited-value")
	t.Setenv("BRIDGE_TEST_HIDDEN", "hidden-value")
	env := map[string]string{"BRIDGE_TEST_SETTING": "config-value"}
	tb := startBridge(t, Config{Command: bin, Args: []string{"stdio"}, Env: env, InheritEnv: []string{"BRIDGE_TEST_INHERITED"}, PoolSize: 2})
	direct := directManager(t, upstream.ServerConfig{Command: bin, Args: []string{"stdio"}})
	ctx := ctxT(t, 2*time.Minute)
	c := connect(t, tb.url, false)

	// The lists are the server's own.
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dtools, err := direct.ListTools(ctx, "direct")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(dtools, func(i, j int) bool { return dtools[i].Name < dtools[j].Name })
	sort.Slice(tools.Tools, func(i, j int) bool { return tools.Tools[i].Name < tools.Tools[j].Name })
	if len(tools.Tools) < 10 {
		t.Fatalf("only %d tools: %v", len(tools.Tools), testenv.ToolNames(tools.Tools))
	}
	sameJSON(t, "tools", tools.Tools, dtools)

	prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dprompts, err := direct.ListPrompts(ctx, "direct")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(dprompts, func(i, j int) bool { return dprompts[i].Name < dprompts[j].Name })
	sort.Slice(prompts.Prompts, func(i, j int) bool { return prompts.Prompts[i].Name < prompts.Prompts[j].Name })
	if len(prompts.Prompts) == 0 {
		t.Fatal("no prompts")
	}
	sameJSON(t, "prompts", prompts.Prompts, dprompts)

	resources, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	dresources, err := direct.ListResources(ctx, "direct")
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(dresources, func(i, j int) bool { return dresources[i].URI < dresources[j].URI })
	sort.Slice(resources.Resources, func(i, j int) bool { return resources.Resources[i].URI < resources.Resources[j].URI })
	if len(resources.Resources) == 0 {
		t.Fatal("no resources")
	}
	sameJSON(t, "resources", resources.Resources, dresources)

	templates, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(templates.ResourceTemplates) == 0 {
		t.Fatal("no resource templates")
	}

	// Tools.
	for _, call := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{"echo", map[string]any{"message": "through the bridge"}, "Echo: through the bridge"},
		{"get-sum", map[string]any{"a": 19, "b": 23}, "42"},
	} {
		res, err := testenv.CallToolCtx(ctx, c, call.tool, call.args)
		if err != nil {
			t.Fatalf("%s: %v", call.tool, err)
		}
		if !strings.Contains(testenv.Text(res), call.want) || res.IsError {
			t.Errorf("%s: %q, want it to contain %q", call.tool, testenv.Text(res), call.want)
		}
	}
	res, err := testenv.CallToolCtx(ctx, c, "get-env", nil)
	if err != nil {
		t.Fatal(err)
	}
	envText := testenv.Text(res)
	for _, want := range []string{"config-value", "inherited-value", markerVar} {
		if !strings.Contains(envText, want) {
			t.Errorf("the server's environment lacks %q", want)
		}
	}
	if strings.Contains(envText, "hidden-value") {
		t.Error("the server got a variable that is neither in Env nor in InheritEnv")
	}

	// Prompts.
	preq := mcp.GetPromptRequest{}
	preq.Params.Name = "args-prompt"
	preq.Params.Arguments = map[string]string{"city": "Lisbon"}
	pres, err := c.GetPrompt(ctx, preq)
	if err != nil {
		t.Fatal(err)
	}
	if len(pres.Messages) == 0 || !strings.Contains(mcp.GetTextFromContent(pres.Messages[0].Content), "Lisbon") {
		t.Errorf("args-prompt: %+v", pres.Messages)
	}

	// Resources: a listed one and one from a template, as the server reads them.
	for _, uri := range []string{resources.Resources[0].URI, "demo://resource/dynamic/text/1"} {
		rreq := mcp.ReadResourceRequest{}
		rreq.Params.URI = uri
		got, err := c.ReadResource(ctx, rreq)
		if err != nil {
			t.Fatalf("read %s: %v", uri, err)
		}
		want, err := direct.ReadResource(ctx, "direct", uri)
		if err != nil {
			t.Fatalf("read %s directly: %v", uri, err)
		}
		if len(got.Contents) == 0 {
			t.Fatalf("read %s: no contents", uri)
		}
		if strings.Contains(uri, "dynamic") { // carries a timestamp
			tc, ok := got.Contents[0].(mcp.TextResourceContents)
			if !ok || tc.URI != uri || tc.Text == "" {
				t.Errorf("read %s: %+v", uri, got.Contents[0])
			}
			continue
		}
		sameJSON(t, "contents of "+uri, got.Contents, want.Contents)
	}

	// 24 calls from 4 clients (both protocol eras) at once over the pool of
	// 2: half of them take a second, so the second process is needed.
	const clients, perClient = 4, 6
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for i := range clients {
		cc := connect(t, tb.url, i%2 == 0)
		for j := range perClient {
			wg.Add(1)
			go func() {
				defer wg.Done()
				tool, args, want := "get-sum", map[string]any{"a": i, "b": 100 * j}, fmt.Sprint(i+100*j)
				if j%2 == 1 {
					tool, args, want = "trigger-long-running-operation", map[string]any{"duration": 1, "steps": 1}, "completed"
				}
				res, err := testenv.CallToolCtx(ctx, cc, tool, args)
				switch {
				case err != nil:
					errs <- fmt.Errorf("client %d call %d %s: %w", i, j, tool, err)
				case !strings.Contains(testenv.Text(res), want) || res.IsError:
					errs <- fmt.Errorf("client %d call %d %s: %q, want it to contain %q", i, j, tool, testenv.Text(res), want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if h := getHealth(t, tb.url, 200); h.Processes != 2 || h.Server != "mcp-servers/everything" {
		t.Errorf("health after concurrent calls: %+v, want 2 processes of mcp-servers/everything", h)
	}
}

// TestMemory serves @modelcontextprotocol/server-memory to two clients:
// what one writes, the other reads, over either process of the pool.
func TestMemory(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-memory")
	file := filepath.Join(t.TempDir(), "memory.jsonl")
	tb := startBridge(t, Config{Command: bin, Env: map[string]string{"MEMORY_FILE_PATH": file}})
	ctx := ctxT(t, time.Minute)
	writer, reader := connect(t, tb.url, false), connect(t, tb.url, true)

	res, err := testenv.CallToolCtx(ctx, writer, "create_entities", map[string]any{"entities": []any{
		map[string]any{"name": "Bridge", "entityType": "component", "observations": []any{"serves stdio servers over HTTP"}},
	}})
	if err != nil || res.IsError {
		t.Fatalf("create_entities: %v %v", err, res)
	}
	res, err = testenv.CallToolCtx(ctx, reader, "search_nodes", map[string]any{"query": "stdio"})
	if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "serves stdio servers over HTTP") {
		t.Fatalf("search_nodes from the other client: %v %v", err, res)
	}
	rreq := mcp.ReadResourceRequest{}
	rreq.Params.URI = "memory://knowledge-graph"
	if rres, err := reader.ReadResource(ctx, rreq); err != nil {
		t.Errorf("read memory://knowledge-graph: %v", err)
	} else if tc, ok := rres.Contents[0].(mcp.TextResourceContents); !ok || !strings.Contains(tc.Text, "Bridge") {
		t.Errorf("memory://knowledge-graph: %+v", rres.Contents)
	}
	if b, err := os.ReadFile(file); err != nil || !strings.Contains(string(b), "serves stdio servers over HTTP") {
		t.Errorf("memory file %s: %q %v", file, b, err)
	}
}

// TestFilesystem serves @modelcontextprotocol/server-filesystem on a
// temporary directory: files written through the bridge land there, and
// the server's own access rule still applies.
func TestFilesystem(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-filesystem")
	dir, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tb := startBridge(t, Config{Command: bin, Args: []string{dir}})
	ctx := ctxT(t, time.Minute)
	c := connect(t, tb.url, false)
	path := filepath.Join(dir, "note.txt")

	res, err := testenv.CallToolCtx(ctx, c, "write_file", map[string]any{"path": path, "content": "written through the bridge\n"})
	if err != nil || res.IsError {
		t.Fatalf("write_file: %v %v", err, res)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "written through the bridge\n" {
		t.Fatalf("the file on disk: %q %v", b, err)
	}
	res, err = testenv.CallToolCtx(ctx, c, "read_text_file", map[string]any{"path": path})
	if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "written through the bridge") {
		t.Fatalf("read_text_file: %v %v", err, res)
	}
	res, err = testenv.CallToolCtx(ctx, c, "list_directory", map[string]any{"path": dir})
	if err != nil || !strings.Contains(testenv.Text(res), "note.txt") {
		t.Fatalf("list_directory: %v %v", err, res)
	}
	outside := filepath.Join(filepath.Dir(dir), "outside.txt")
	res, err = testenv.CallToolCtx(ctx, c, "write_file", map[string]any{"path": outside, "content": "x"})
	if err != nil {
		t.Fatalf("write outside: %v", err)
	}
	if !res.IsError || !strings.Contains(strings.ToLower(testenv.Text(res)), "access denied") {
		t.Errorf("writing outside the allowed directory: %q (isError %v), want access denied", testenv.Text(res), res.IsError)
	}
	if _, err := os.Stat(outside); err == nil {
		t.Error("the file outside the allowed directory was written")
	}
}
