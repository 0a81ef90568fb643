package reliability

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

// TestMain removes the binaries testenv.GoBinary built.
func TestMain(m *testing.M) { testenv.Main(m) }

// echoBin returns the servers/echo binary (fault modes via -misbehave).
func echoBin(t testing.TB) string { return testenv.GoBinary(t, "./servers/echo") }

// toolragBin returns the toolrag CLI binary.
func toolragBin(t testing.TB) string { return testenv.GoBinary(t, "./cmd/toolrag") }

// gwOpts describes a local gateway for a test.
type gwOpts struct {
	Dir      string            // config and data dir; default t.TempDir()
	Registry string            // registry.yaml
	Keys     string            // keys.yaml
	Env      map[string]string // extra MCP_GATEWAY_* / TOOL_RAG_* variables
	NoSync   bool              // do not run the initial full sync
}

// gateway is a real local gateway (SQLite, index dir, builtin embedder,
// upstream manager) behind an httptest server.
type gateway struct {
	g    *local.Runtime
	srv  *httptest.Server
	url  string // MCP endpoint
	base string // server root
	dir  string
	logs *testenv.Buffer
	env  map[string]string
}

func startGateway(t testing.TB, o gwOpts) *gateway {
	t.Helper()
	dir := o.Dir
	if dir == "" {
		dir = t.TempDir()
	}
	writeFile(t, filepath.Join(dir, "registry.yaml"), o.Registry)
	writeFile(t, filepath.Join(dir, "keys.yaml"), o.Keys)
	env := gatewayEnv(dir)
	for k, v := range o.Env {
		env[k] = v
	}
	logs := &testenv.Buffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx := context.Background()
	g, err := local.New(ctx, local.Options{Getenv: func(k string) string { return env[k] }, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if !o.NoSync {
		if _, err := g.Sync(ctx, indexer.ModeFull); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(g.Handler)
	t.Cleanup(srv.Close)
	return &gateway{g: g, srv: srv, url: srv.URL + "/mcp", base: srv.URL, dir: dir, logs: logs, env: env}
}

// gatewayEnv is the environment of a test gateway whose config and data
// live in dir.
func gatewayEnv(dir string) map[string]string {
	return map[string]string{
		"MCP_GATEWAY_CONFIG_DIR":        dir,
		"TOOL_RAG_DB":                   filepath.Join(dir, "tools.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL": "0",
		"MCP_GATEWAY_MAX_BODY_BYTES":    "65536",
		// Many tests fail authentication on purpose from one address;
		// TestAuthFailureLimit sets its own limit.
		"MCP_GATEWAY_AUTH_FAILURE_BURST": "0",
	}
}

func writeFile(t testing.TB, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// stdioEntry is a registry entry for servers/echo over stdio.
func stdioEntry(t testing.TB, id string, extra string, args ...string) string {
	quoted := make([]string, len(args))
	for i, a := range args {
		quoted[i] = strconv.Quote(a)
	}
	s := fmt.Sprintf("  %s:\n    transport: stdio\n    command: %q\n    args: [%s]\n", id, echoBin(t), strings.Join(quoted, ", "))
	if extra != "" {
		s += "    " + extra + "\n"
	}
	return s
}

// recorder keeps every response body the clients of a test received, to
// search them for secrets.
type recorder struct {
	mu     sync.Mutex
	bodies []string
	next   http.RoundTripper
}

func newRecorder() *recorder { return &recorder{next: http.DefaultTransport} }

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	resp.Body = &teeBody{rc: resp.Body, r: r}
	return resp, nil
}

func (r *recorder) add(b []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.bodies = append(r.bodies, string(b))
}

func (r *recorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.bodies...)
}

type teeBody struct {
	rc  io.ReadCloser
	r   *recorder
	buf bytes.Buffer
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.buf.Write(p[:n])
	return n, err
}

func (b *teeBody) Close() error {
	b.r.add(b.buf.Bytes())
	return b.rc.Close()
}

// connect opens an MCP client session with the given key. legacy picks the
// session-based protocol era; otherwise the stateless 2026-07-28 one.
func connect(t testing.TB, url, key string, legacy bool, rec *recorder) *client.Client {
	t.Helper()
	c, _ := testenv.Connect(t, url, clientOptions(key, legacy, rec))
	return c
}

// dial is connect that returns the error and leaves closing to the caller.
func dial(url, key string, legacy bool, rec *recorder) (*client.Client, error) {
	c, _, err := testenv.Dial(url, clientOptions(key, legacy, rec))
	return c, err
}

// clientOptions are the reliability tests' client: the key, the era and,
// when rec is set, every response body recorded.
func clientOptions(key string, legacy bool, rec *recorder) testenv.MCPClient {
	o := testenv.MCPClient{Key: key, Legacy: legacy, Name: "reliability"}
	if rec != nil {
		o.Transport = []transport.StreamableHTTPCOption{transport.WithHTTPBasicClient(&http.Client{Transport: rec})}
	}
	return o
}

// batchResult is the structured answer of run_tools.
type batchResult struct {
	Results []struct {
		ID       string `json:"id"`
		CallName string `json:"call_name"`
		OK       bool   `json:"ok"`
		Error    string `json:"error"`
		Result   *struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	} `json:"results"`
	Succeeded int `json:"succeeded"`
	Failed    int `json:"failed"`
}

func parseBatch(t testing.TB, res *mcp.CallToolResult) batchResult {
	t.Helper()
	var b batchResult
	if err := json.Unmarshal([]byte(testenv.Text(res)), &b); err != nil {
		t.Fatalf("run_tools answer is not JSON: %v: %s", err, testenv.Text(res))
	}
	return b
}

// httpDo sends one request and returns status, headers and body.
func httpDo(t testing.TB, hc *http.Client, method, url, key, body string, hdr map[string]string) (int, http.Header, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// metrics returns the JSON metrics snapshot.
func (g *gateway) metrics(t testing.TB, key string) (map[string]any, string) {
	t.Helper()
	code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/metrics", key, "", nil)
	if code != 200 {
		t.Fatalf("metrics: %d %s", code, body)
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatalf("metrics: %v: %s", err, body)
	}
	return m, body
}

// childPIDs returns the pids of this process's children whose command line
// contains every marker.
func childPIDs(t testing.TB, markers ...string) []int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Skip("no /proc: cannot find upstream processes")
	}
	self := os.Getpid()
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may contain spaces, so split after ")".
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(stat[i+1:]))
		if len(fields) < 2 || fields[1] != strconv.Itoa(self) || fields[0] == "Z" || fields[0] == "X" {
			continue // not our child, or already dead and not yet reaped
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		line := strings.ReplaceAll(string(cmdline), "\x00", " ")
		all := true
		for _, m := range markers {
			all = all && strings.Contains(line, m)
		}
		if all {
			pids = append(pids, pid)
		}
	}
	return pids
}

func kill(pid int) { _ = syscall.Kill(pid, syscall.SIGKILL) }
