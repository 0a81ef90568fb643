package bridge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

func TestNewRejectsBadConfig(t *testing.T) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	cases := []struct {
		name string
		cfg  Config
		want string
	}{
		{"no command", Config{}, "no server command"},
		{"blank command", Config{Command: "  "}, "no server command"},
		{"negative pool", Config{Command: echoBin, PoolSize: -1}, "pool size -1 is negative"},
		{"negative concurrency", Config{Command: echoBin, MaxConcurrent: -2}, "max concurrent calls -2 is negative"},
		{"negative timeout", Config{Command: echoBin, CallTimeout: -time.Second}, "timeouts must not be negative"},
		{"relative path", Config{Command: echoBin, Path: "mcp"}, `path "mcp" must be an absolute URL path`},
		{"health path", Config{Command: echoBin, Path: "/health"}, `path "/health" is not allowed`},
		{"root path", Config{Command: echoBin, Path: "/"}, `path "/" is not allowed`},
		{"reserved env", Config{Command: echoBin, Env: map[string]string{markerVar: "x"}}, "reserved for the bridge"},
		{"missing executable", Config{Command: "no-such-mcp-server-xyz"}, `"no-such-mcp-server-xyz" is not an executable in PATH`},
		{"exits at start", Config{Command: echoBin, Args: []string{"-misbehave", "exit-at-start"}, RestartBackoff: upstream.Backoff{Min: time.Millisecond}},
			"ECHO_REQUIRED_SETTING is not set"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tc.cfg.Logger = quiet
			b, err := New(ctxT(t, 30*time.Second), tc.cfg)
			if err == nil {
				b.Close()
				t.Fatalf("New succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "bridge: ") {
				t.Fatalf("error %q, want it to start with \"bridge: \" and contain %q", err, tc.want)
			}
		})
	}
}

// TestMirrorsEcho serves servers/echo and uses every part of its surface
// through the bridge, with a client of each protocol era.
func TestMirrorsEcho(t *testing.T) {
	tb := startBridge(t, Config{Command: echoBin})
	for _, era := range []struct {
		name     string
		legacy   bool
		protocol string
	}{
		{"modern", false, mcp.LATEST_PROTOCOL_VERSION},
		{"legacy", true, mcp.LATEST_LEGACY_PROTOCOL_VERSION},
	} {
		t.Run(era.name, func(t *testing.T) {
			ctx := ctxT(t, 30*time.Second)
			c, init := testenv.Connect(t, tb.url+"/mcp", testenv.MCPClient{Legacy: era.legacy, Name: "bridge-test"})
			if got := c.ProtocolVersion(); got != era.protocol {
				t.Errorf("negotiated protocol %q, want %q", got, era.protocol)
			}
			if init.ServerInfo.Name != "echo" || init.ServerInfo.Version != "1.0.0" {
				t.Errorf("serverInfo %+v, want the child's (echo 1.0.0)", init.ServerInfo)
			}
			if !strings.Contains(init.Instructions, "Reference server of the MCP gateway") {
				t.Errorf("instructions %q are not the child's", init.Instructions)
			}

			tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			names := testenv.ToolNames(tools.Tools)
			slices.Sort(names)
			if want := []string{"add", "echo", "fail", "reverse", "sleep"}; !slices.Equal(names, want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			for _, tool := range tools.Tools {
				if tool.Name == "echo" && (tool.Description != "Return the given text unchanged." ||
					!slices.Equal(tool.InputSchema.Required, []string{"text"}) || tool.InputSchema.Properties["text"] == nil) {
					t.Errorf("echo tool lost its definition: %+v", tool)
				}
			}

			calls := []struct {
				tool    string
				args    map[string]any
				want    string
				isError bool
			}{
				{"echo", map[string]any{"text": "héllo wörld"}, "héllo wörld", false},
				{"add", map[string]any{"a": 2, "b": 3.5}, "5.5", false},
				{"reverse", map[string]any{"text": "abc"}, "cba", false},
				{"fail", map[string]any{"message": "nope"}, "nope", true},
			}
			for _, call := range calls {
				res, err := testenv.CallToolCtx(ctx, c, call.tool, call.args)
				if err != nil {
					t.Fatalf("%s: %v", call.tool, err)
				}
				if testenv.Text(res) != call.want || res.IsError != call.isError {
					t.Errorf("%s: got %q (isError %v), want %q (isError %v)", call.tool, testenv.Text(res), res.IsError, call.want, call.isError)
				}
			}
			if _, err := testenv.CallToolCtx(ctx, c, "no_such_tool", nil); err == nil || !strings.Contains(err.Error(), "not found") {
				t.Errorf("unknown tool: err %v, want a not-found error", err)
			}

			prompts, err := c.ListPrompts(ctx, mcp.ListPromptsRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(prompts.Prompts) != 1 || prompts.Prompts[0].Name != "greeting" || len(prompts.Prompts[0].Arguments) != 1 {
				t.Fatalf("prompts %+v, want greeting with one argument", prompts.Prompts)
			}
			preq := mcp.GetPromptRequest{}
			preq.Params.Name = "greeting"
			preq.Params.Arguments = map[string]string{"name": "Ada"}
			pres, err := c.GetPrompt(ctx, preq)
			if err != nil {
				t.Fatal(err)
			}
			if len(pres.Messages) != 1 || mcp.GetTextFromContent(pres.Messages[0].Content) != "Say hello to Ada." {
				t.Errorf("greeting rendered %+v", pres.Messages)
			}
			preq.Params.Arguments = nil
			if _, err := c.GetPrompt(ctx, preq); err == nil || !strings.Contains(err.Error(), "argument name is required") {
				t.Errorf("greeting without name: err %v, want the child's error", err)
			}

			resources, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(resources.Resources) != 1 || resources.Resources[0].URI != "echo://info" || resources.Resources[0].MIMEType != "text/plain" {
				t.Fatalf("resources %+v, want echo://info", resources.Resources)
			}
			templates, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
			if err != nil {
				t.Fatal(err)
			}
			if len(templates.ResourceTemplates) != 1 || templates.ResourceTemplates[0].URITemplate.Raw() != "echo://items/{id}" {
				t.Fatalf("templates %+v, want echo://items/{id}", templates.ResourceTemplates)
			}
			for uri, want := range map[string]string{"echo://info": "echo 1.0.0: reference MCP server of the gateway", "echo://items/42": "item 42"} {
				rreq := mcp.ReadResourceRequest{}
				rreq.Params.URI = uri
				rres, err := c.ReadResource(ctx, rreq)
				if err != nil {
					t.Fatalf("read %s: %v", uri, err)
				}
				if len(rres.Contents) != 1 {
					t.Fatalf("read %s: %d contents", uri, len(rres.Contents))
				}
				tc, ok := rres.Contents[0].(mcp.TextResourceContents)
				if !ok || tc.Text != want || tc.URI != uri {
					t.Errorf("read %s: %+v, want text %q", uri, rres.Contents[0], want)
				}
			}
			rreq := mcp.ReadResourceRequest{}
			rreq.Params.URI = "other://x"
			if _, err := c.ReadResource(ctx, rreq); err == nil {
				t.Error("reading a URI the child does not offer succeeded")
			}
		})
	}

	h := getHealth(t, tb.url, http.StatusOK)
	if h.Status != "ok" || h.Server != "echo" || h.Version != "1.0.0" || h.Tools != 5 || h.Prompts != 1 || h.Resources != 1 || h.ResourceTemplates != 1 {
		t.Errorf("health %+v", h)
	}
	if h.Processes != 1 || len(h.PIDs) != 1 {
		t.Errorf("health reports %d processes %v, want the 1 the calls needed", h.Processes, h.PIDs)
	}
}

// TestConcurrentClients runs 24 calls from 4 HTTP clients (both protocol
// eras) at once over a pool of 2 processes.
func TestConcurrentClients(t *testing.T) {
	tb := startBridge(t, Config{Command: echoBin, PoolSize: 2})
	const clients, perClient = 4, 6
	ctx := ctxT(t, 60*time.Second)
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for i := range clients {
		c := connect(t, tb.url, i%2 == 1)
		for j := range perClient {
			wg.Add(1)
			go func() {
				defer wg.Done()
				word := fmt.Sprintf("c%dcall%d", i, j)
				tool, args, want := "reverse", map[string]any{"text": word}, reverse(word)
				if j%2 == 0 {
					tool, args, want = "sleep", map[string]any{"ms": 150}, "slept 150 ms"
				}
				res, err := testenv.CallToolCtx(ctx, c, tool, args)
				switch {
				case err != nil:
					errs <- fmt.Errorf("%s %s: %w", word, tool, err)
				case testenv.Text(res) != want || res.IsError:
					errs <- fmt.Errorf("%s %s: got %q, want %q", word, tool, testenv.Text(res), want)
				}
			}()
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if pids := tb.PIDs(); len(pids) != 2 {
		t.Errorf("%d processes %v after concurrent calls, want the pool size 2", len(pids), pids)
	}
}

func reverse(s string) string {
	r := []rune(s)
	slices.Reverse(r)
	return string(r)
}

// listFixture is a listserver bridge whose extra tools come from a file.
type listFixture struct {
	*testBridge
	dir       string
	toolsFile string
	refuse    string
}

func startList(t *testing.T, tools []string, watch bool, cfg Config) *listFixture {
	t.Helper()
	f := &listFixture{dir: t.TempDir()}
	f.toolsFile = filepath.Join(f.dir, "tools")
	f.refuse = filepath.Join(f.dir, "refuse")
	f.setTools(t, tools...)
	cfg.Command = listBin
	cfg.Args = []string{"-tools", f.toolsFile, "-refuse", f.refuse}
	if watch {
		cfg.Args = append(cfg.Args, "-watch")
	}
	if cfg.RestartBackoff.Min == 0 {
		cfg.RestartBackoff = upstream.Backoff{Min: 20 * time.Millisecond, Max: 100 * time.Millisecond}
	}
	f.testBridge = startBridge(t, cfg)
	return f
}

func (f *listFixture) setTools(t testing.TB, names ...string) {
	t.Helper()
	if err := os.WriteFile(f.toolsFile, []byte(strings.Join(names, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}

// listedTools lists the bridge's tools through c.
func listedTools(t testing.TB, ctx context.Context, c interface {
	ListTools(context.Context, mcp.ListToolsRequest) (*mcp.ListToolsResult, error)
}) []string {
	t.Helper()
	res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	names := testenv.ToolNames(res.Tools)
	slices.Sort(names)
	return names
}

// startHold starts the hold tool (ms milliseconds) through c and waits
// until the child runs it; it returns the child's pid and the call's outcome.
func startHold(t *testing.T, c interface {
	CallTool(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error)
}, dir string, ms int) (int, <-chan callOutcome) {
	t.Helper()
	marker := filepath.Join(dir, fmt.Sprintf("hold-%d", time.Now().UnixNano()))
	out := make(chan callOutcome, 1)
	go func() {
		req := mcp.CallToolRequest{}
		req.Params.Name = "hold"
		req.Params.Arguments = map[string]any{"ms": ms, "marker": marker}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		res, err := c.CallTool(ctx, req)
		out <- callOutcome{res, err}
	}()
	var pid int
	testenv.Eventually(t, 30*time.Second, "the hold call reaching the child", func() bool {
		b, err := os.ReadFile(marker)
		if err != nil || len(b) == 0 {
			return false
		}
		pid, err = strconv.Atoi(string(b))
		return err == nil
	})
	return pid, out
}

type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// TestKilledChild kills the process that runs a call: that call fails
// with a clear error, the next calls succeed on a replacement, and the
// lists are re-read from it.
func TestKilledChild(t *testing.T) {
	f := startList(t, []string{"alpha"}, false, Config{RefreshInterval: -1, PoolSize: 2})
	ctx := ctxT(t, 60*time.Second)
	c := connect(t, f.url, false)
	if got := listedTools(t, ctx, c); !slices.Equal(got, []string{"alpha", "hold", "pid"}) {
		t.Fatalf("tools %v", got)
	}

	pid, out := startHold(t, c, f.dir, 60_000)
	if !slices.Contains(f.PIDs(), pid) {
		t.Fatalf("the process running the call (%d) is not among PIDs() %v", pid, f.PIDs())
	}
	f.setTools(t, "beta") // what the replacement will offer
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := <-out
	want := `upstream "listserver": tools/call failed: the server process exited (signal: killed) during the call`
	if o.err == nil || !strings.Contains(o.err.Error(), want) {
		t.Fatalf("in-flight call: result %+v, err %v; want an error containing %q", o.res, o.err, want)
	}

	// The following calls succeed, on a new process.
	for i := range 5 {
		res, err := testenv.CallToolCtx(ctx, c, "pid", nil)
		if err != nil {
			t.Fatalf("call %d after the kill: %v", i, err)
		}
		if got := testenv.Text(res); got == strconv.Itoa(pid) || got == "" {
			t.Fatalf("call %d answered by pid %q, want a new process (killed: %d)", i, got, pid)
		}
	}
	// The lists are re-read from the replacement without any interval.
	testenv.Eventually(t, 30*time.Second, "the replacement's tool list reaching the clients", func() bool {
		return slices.Equal(listedTools(t, ctx, c), []string{"beta", "hold", "pid"})
	})
	res, err := testenv.CallToolCtx(ctx, c, "beta", nil)
	if err != nil || testenv.Text(res) != "beta" {
		t.Fatalf("beta: %v %v", res, err)
	}
	if h := getHealth(t, f.url, http.StatusOK); h.Tools != 3 || h.RefreshError != "" {
		t.Errorf("health after the restart: %+v", h)
	}
}

// TestRefreshInterval changes the child's tools while it runs: the bridge
// picks the change up on its interval and tells listening clients.
func TestRefreshInterval(t *testing.T) {
	f := startList(t, []string{"one"}, true, Config{RefreshInterval: 30 * time.Millisecond})
	ctx := ctxT(t, 60*time.Second)
	c := connect(t, f.url, true, transport.WithContinuousListening())
	var changed atomic.Int32
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changed.Add(1)
		}
	})
	if got := listedTools(t, ctx, c); !slices.Equal(got, []string{"hold", "one", "pid"}) {
		t.Fatalf("tools %v", got)
	}
	f.setTools(t, "two", "three")
	testenv.Eventually(t, 30*time.Second, "the new tools reaching the clients", func() bool {
		return slices.Equal(listedTools(t, ctx, c), []string{"hold", "pid", "three", "two"})
	})
	// The client opens its GET stream (where notifications go) on its own
	// after initialize; on a loaded machine the change above can come
	// first and notify nobody. Change the list again until one arrives.
	deadline := time.Now().Add(30 * time.Second)
	four := false // the list has the extra tool "four" now
	for changed.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no tools/list_changed notification within 30s of list changes")
		}
		time.Sleep(300 * time.Millisecond)
		if changed.Load() > 0 {
			break
		}
		if four = !four; four {
			f.setTools(t, "two", "three", "four")
		} else {
			f.setTools(t, "two", "three")
		}
	}
	if four { // back to two and three; the stream is open now, so that is notified too
		testenv.Eventually(t, 30*time.Second, "the extra tool reaching the clients", func() bool {
			return slices.Contains(listedTools(t, ctx, c), "four")
		})
		k := changed.Load()
		f.setTools(t, "two", "three")
		testenv.Eventually(t, 30*time.Second, "the notification of the last change", func() bool { return changed.Load() > k })
	}
	testenv.Eventually(t, 30*time.Second, "the tools settling", func() bool {
		return slices.Equal(listedTools(t, ctx, c), []string{"hold", "pid", "three", "two"})
	})
	res, err := testenv.CallToolCtx(ctx, c, "three", nil)
	if err != nil || testenv.Text(res) != "three" {
		t.Fatalf("three: %v %v", res, err)
	}
	if _, err := testenv.CallToolCtx(ctx, c, "one", nil); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a removed tool: err %v, want not found", err)
	}
	// An unchanged list is not re-registered: no notification storm. (First
	// let the notifications of the changes above arrive.)
	for quiet := time.Now().Add(10 * time.Second); time.Now().Before(quiet); {
		v := changed.Load()
		time.Sleep(300 * time.Millisecond)
		if changed.Load() == v {
			break
		}
	}
	n := changed.Load()
	before := f.counts().refreshed
	testenv.Eventually(t, 30*time.Second, "two more refreshes", func() bool {
		return f.counts().refreshed.After(before.Add(60 * time.Millisecond))
	})
	if got := changed.Load(); got != n {
		t.Errorf("%d list_changed notifications while nothing changed", got-n)
	}
}

func getHealth(t testing.TB, base string, wantStatus int) Health {
	t.Helper()
	resp, err := http.Get(base + "/health")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var h Health
	body, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(body, &h); err != nil {
		t.Fatalf("/health body %q: %v", body, err)
	}
	if resp.StatusCode != wantStatus {
		t.Fatalf("/health answered %d %s, want %d", resp.StatusCode, body, wantStatus)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("/health Content-Type %q", ct)
	}
	return h
}

// TestHealth walks /health through ok, a server that no longer starts,
// recovery, and draining.
func TestHealth(t *testing.T) {
	f := startList(t, nil, false, Config{RefreshInterval: -1, PoolSize: 1, HealthTimeout: 2 * time.Second})
	h := getHealth(t, f.url, http.StatusOK)
	if h.Status != "ok" || h.Processes != 1 || len(h.PIDs) != 1 || h.Server != "listserver" || h.Tools != 2 || h.LastRefresh.IsZero() {
		t.Fatalf("health %+v", h)
	}
	raw, err := http.Get(f.url + "/health")
	if err != nil {
		t.Fatal(err)
	}
	var fields map[string]any
	_ = json.NewDecoder(raw.Body).Decode(&fields)
	raw.Body.Close()
	if fields["status"] != "ok" || fields["processes"] != float64(1) {
		t.Errorf("health JSON %v lacks status ok / processes 1", fields)
	}

	// The process dies and its replacement refuses to start.
	if err := os.WriteFile(f.refuse, []byte("DATABASE_URL is not set"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(-h.PIDs[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "the process exit", func() bool { return len(f.PIDs()) == 0 })
	h = getHealth(t, f.url, http.StatusServiceUnavailable)
	if h.Status != "unavailable" || h.Processes != 0 || !strings.Contains(h.Error, `upstream "listserver"`) {
		t.Errorf("health of a server that does not start: %+v", h)
	}
	testenv.Eventually(t, 30*time.Second, "the start failure in /health", func() bool {
		h = getHealth(t, f.url, http.StatusServiceUnavailable)
		return strings.Contains(h.Error, "DATABASE_URL is not set")
	})

	// It starts again.
	if err := os.Remove(f.refuse); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 30*time.Second, "recovery", func() bool {
		resp, err := http.Get(f.url + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	if h := getHealth(t, f.url, http.StatusOK); h.Processes != 1 || h.Error != "" {
		t.Errorf("health after recovery: %+v", h)
	}

	if resp, err := http.Post(f.url+"/health", "application/json", nil); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /health: %d, want 405", resp.StatusCode)
	}

	f.Drain()
	if h := getHealth(t, f.url, http.StatusServiceUnavailable); h.Status != "draining" {
		t.Errorf("health while draining: %+v", h)
	}
}

// TestServeDrains cancels Serve's context while a call runs and a client
// listens: the call finishes, Serve returns, the processes are gone and
// the port is closed.
func TestServeDrains(t *testing.T) {
	logs := &testenv.Buffer{}
	dir := t.TempDir()
	b, err := New(ctxT(t, 30*time.Second), Config{Command: listBin, Logger: slog.New(slog.NewTextHandler(logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	served := make(chan error, 1)
	go func() { served <- b.Serve(ctx, ln, 20*time.Second) }()

	listener := connect(t, base, true, transport.WithContinuousListening())
	_ = listener
	c := connect(t, base, false)
	_, out := startHold(t, c, dir, 300)
	stop() // as SIGTERM does
	o := <-out
	if o.err != nil || testenv.Text(o.res) != "held" {
		t.Errorf("the call in flight at shutdown: %+v, %v; want it to finish", o.res, o.err)
	}
	if err := <-served; err != nil {
		t.Errorf("Serve: %v", err)
	}
	if pids := b.PIDs(); len(pids) != 0 {
		t.Errorf("processes %v alive after Serve returned", pids)
	}
	if conn, err := net.Dial("tcp", ln.Addr().String()); err == nil {
		conn.Close()
		t.Error("the port still accepts connections after Serve returned")
	}
	if strings.Contains(logs.String(), "cut off") {
		t.Errorf("drain timed out (a listening stream kept Shutdown waiting):\n%s", logs)
	}
}

func TestServeReportsListenerError(t *testing.T) {
	b, err := New(ctxT(t, 30*time.Second), Config{Command: echoBin, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	err = b.Serve(context.Background(), ln, time.Second)
	if err == nil || !errors.Is(err, net.ErrClosed) || !strings.Contains(err.Error(), "bridge: serving on") {
		t.Errorf("Serve on a closed listener: %v", err)
	}
	if pids := b.PIDs(); len(pids) != 0 {
		t.Errorf("processes %v alive after Serve failed", pids)
	}
}

// TestGatewayReachesBridge reaches the bridge the way the gateway reaches
// a Fargate stdio server: pkg/upstream over streamable_http.
func TestGatewayReachesBridge(t *testing.T) {
	f := startList(t, []string{"alpha"}, false, Config{RefreshInterval: -1})
	m := upstream.NewManager(upstream.Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	defer m.Close()
	m.SetServers(map[string]upstream.ServerConfig{"fargate": {Transport: upstream.TransportStreamableHTTP, URL: f.url + "/mcp"}})
	ctx := ctxT(t, time.Minute)

	tools, err := m.ListTools(ctx, "fargate")
	if err != nil {
		t.Fatal(err)
	}
	names := testenv.ToolNames(tools)
	slices.Sort(names)
	if !slices.Equal(names, []string{"alpha", "hold", "pid"}) {
		t.Fatalf("tools %v", names)
	}
	res, err := m.CallTool(ctx, "fargate", "alpha", nil)
	if err != nil || testenv.Text(res) != "alpha" {
		t.Fatalf("alpha: %v %v", res, err)
	}

	// A crash behind the bridge reaches the gateway worded, as a JSON-RPC
	// error of the bridge.
	pid, out := startHold(t, gatewayCaller{m, "fargate"}, f.dir, 60_000)
	if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	o := <-out
	if o.err == nil || !strings.Contains(o.err.Error(), `upstream "fargate": tools/call failed: the server answered with error -32603: upstream "listserver": tools/call failed: the server process exited (signal: killed) during the call`) {
		t.Fatalf("crash seen by the gateway: %v", o.err)
	}
	if res, err := m.CallTool(ctx, "fargate", "pid", nil); err != nil || testenv.Text(res) == strconv.Itoa(pid) {
		t.Fatalf("call after the crash: %v %v", res, err)
	}
}

// gatewayCaller calls tools through an upstream.Manager.
type gatewayCaller struct {
	m  *upstream.Manager
	id string
}

func (g gatewayCaller) CallTool(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return g.m.CallTool(ctx, g.id, req.Params.Name, req.GetArguments())
}
