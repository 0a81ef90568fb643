package local

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/toolrag/mcp-gateway/internal/testenv"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// heldUpstream is a real MCP server (mcp-go over Streamable HTTP) whose
// answers can be held back, which keeps a gateway's sync running.
type heldUpstream struct {
	mu   sync.Mutex
	gate chan struct{} // closed: answering
	srv  *httptest.Server
}

func newHeldUpstream(t *testing.T) *heldUpstream {
	s := server.NewMCPServer("weather", "1")
	s.AddTool(mcp.NewTool("forecast", mcp.WithDescription("Weather forecast for a city: temperature and rain for the next days."),
		mcp.WithString("city", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("sunny in " + req.GetString("city", "")), nil
		})
	h := &heldUpstream{gate: make(chan struct{})}
	close(h.gate)
	mcpHandler := server.NewStreamableHTTPServer(s)
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		gate := h.gate
		h.mu.Unlock()
		select {
		case <-gate:
		case <-r.Context().Done():
			return
		}
		mcpHandler.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { h.release(); h.srv.Close() })
	return h
}

func (h *heldUpstream) hold() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gate = make(chan struct{})
}

func (h *heldUpstream) release() {
	h.mu.Lock()
	defer h.mu.Unlock()
	select {
	case <-h.gate:
	default:
		close(h.gate)
	}
}

// serveGateway runs New + Serve on a loopback port over dir's config and
// database until the test ends; it returns the base URL.
func serveGateway(t *testing.T, dir string, wait time.Duration) string {
	t.Helper()
	vals := map[string]string{
		"MCP_GATEWAY_CONFIG_DIR":        dir,
		"TOOL_RAG_DB":                   filepath.Join(dir, "tools.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL": "0",
	}
	ctx, cancel := context.WithCancel(context.Background())
	g, err := New(ctx, Options{Getenv: func(k string) string { return vals[k] }, Logger: slog.New(slog.DiscardHandler), StartupWait: wait})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- g.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
		g.Close()
	})
	return "http://" + ln.Addr().String()
}

func retrieveREST(t *testing.T, base, query string) (int, http.Header, map[string]any) {
	t.Helper()
	req, _ := http.NewRequest("POST", base+"/tool-rag/retrieve", strings.NewReader(fmt.Sprintf(`{"query": %q}`, query)))
	req.Header.Set("Authorization", "Bearer k-agent")
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("retrieve: %d %s", resp.StatusCode, b)
	}
	return resp.StatusCode, resp.Header, out
}

func resultIDs(out map[string]any) []string {
	var ids []string
	rs, _ := out["results"].([]any)
	for _, r := range rs {
		if m, ok := r.(map[string]any); ok {
			ids = append(ids, fmt.Sprint(m["tool_id"]))
		}
	}
	return ids
}

// TestStartupWithEmptyCatalog: while the first sync runs on an empty
// catalog, retrievals wait for it, and past the wait say that the catalog
// is loading (503 + Retry-After over REST, a tool error from find_tools)
// instead of answering "nothing found". A restarted gateway serves its
// stored catalog at once, before its sync can finish.
func TestStartupWithEmptyCatalog(t *testing.T) {
	up := newHeldUpstream(t)
	configDir := func(t *testing.T) string {
		dir := t.TempDir()
		registry := fmt.Sprintf("servers:\n  weather:\n    transport: streamable_http\n    url: %s/mcp\n", up.srv.URL)
		keys := "keys:\n  - id: agent\n    secret: \"k-agent\"\n    servers: {weather: {}}\n"
		for name, body := range map[string]string{"registry.yaml": registry, "keys.yaml": keys} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	const query = "weather forecast for Paris"

	t.Run("past the wait", func(t *testing.T) {
		up.hold()
		defer up.release()
		base := serveGateway(t, configDir(t), time.Second)
		// app.ServeWhileLoading: GET /health answers at once, saying so.
		resp, err := http.Get(base + "/health")
		if err != nil {
			t.Fatal(err)
		}
		var h map[string]any
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK || h["status"] != "loading" || h["ready"] != false || h["runtime"] != "local" {
			t.Fatalf("GET /health during the first sync: %d %v %v, want 200 with status loading", resp.StatusCode, h, err)
		}
		var wg sync.WaitGroup
		wg.Add(2)
		go func() {
			defer wg.Done()
			code, hdr, out := retrieveREST(t, base, query)
			if code != http.StatusServiceUnavailable || hdr.Get("Retry-After") == "" || !strings.Contains(fmt.Sprint(out["error"]), "still loading") {
				t.Errorf("retrieve during the first sync: %d Retry-After=%q %v, want 503 with Retry-After and a loading message", code, hdr.Get("Retry-After"), out)
			}
		}()
		go func() {
			defer wg.Done()
			c, _ := connect(t, base+"/mcp", "k-agent", false)
			res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": query})
			if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "still loading") {
				t.Errorf("find_tools during the first sync: %v %+v, want a tool error saying the catalog is loading", err, res)
			}
		}()
		wg.Wait()
	})

	dir := configDir(t)
	t.Run("within the wait", func(t *testing.T) {
		up.hold()
		base := serveGateway(t, dir, time.Minute)
		type answer struct {
			code int
			out  map[string]any
		}
		ch := make(chan answer, 1)
		go func() {
			code, _, out := retrieveREST(t, base, query)
			ch <- answer{code, out}
		}()
		time.Sleep(200 * time.Millisecond)
		up.release()
		a := <-ch
		if ids := resultIDs(a.out); a.code != http.StatusOK || len(ids) == 0 || ids[0] != "weather__forecast" || a.out["loading"] != nil {
			t.Fatalf("retrieve that waited for the first sync: %d %v", a.code, a.out)
		}
	})

	t.Run("restart with a stored catalog", func(t *testing.T) {
		up.hold() // the sync cannot finish: what is served comes from the store
		base := serveGateway(t, dir, time.Minute)
		code, _, out := retrieveREST(t, base, query)
		if ids := resultIDs(out); code != http.StatusOK || len(ids) == 0 || ids[0] != "weather__forecast" || out["loading"] != nil {
			t.Fatalf("retrieve on restart: %d %v, want the stored tool at once", code, out)
		}
		c, _ := connect(t, base+"/mcp", "k-agent", false)
		res, err := testenv.CallTool(c, 30*time.Second, "describe_tool", map[string]any{"call_name": "weather__forecast"})
		if err != nil || res.IsError {
			t.Fatalf("describe_tool of a stored tool on restart: %v %+v", err, res)
		}
		up.release()
		res, err = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "weather__forecast", "arguments": map[string]any{"city": "Paris"}})
		if err != nil || res.IsError || !strings.Contains(testenv.Text(res), "sunny in Paris") {
			t.Fatalf("run_tool of a stored tool on restart: %v %+v", err, res)
		}
	})
}
