// Package loadtest drives a real local gateway with many concurrent MCP
// clients: it starts in-process Streamable HTTP upstreams built from the
// benchmark catalogs (plus a few stdio servers), a local gateway fronting
// them, and clients mixing find_tools, describe_tool, run_tool and
// run_tools for a fixed time. Everything listens on 127.0.0.1 only and
// stops by itself; `toolrag-lab loadtest` is the command-line front end.
package loadtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

// Operations of the client mix.
const (
	OpConnect  = "connect"
	OpFind     = "find_tools"
	OpDescribe = "describe_tool"
	OpRun      = "run_tool"
	OpRunMany  = "run_tools"
)

// Config configures a load test.
type Config struct {
	// BenchDirs hold tools.jsonl (and optionally queries.jsonl), e.g.
	// ../shared/bench/livemcpbench and ../shared/bench/stabletoolbench.
	BenchDirs []string
	// Upstreams is the number of in-process HTTP upstreams the catalog is
	// split over (default 50).
	Upstreams int
	// Stdio is the number of stdio upstreams running EchoCommand (the
	// servers/echo binary); 0 runs none.
	Stdio       int
	EchoCommand []string
	// Clients is the number of concurrent MCP clients (default 200); half
	// speak the session-based protocol era, half the stateless one.
	Clients int
	// Duration is how long the clients run (default 60s).
	Duration time.Duration
	// MaxOpsPerClient bounds each client's operations (default 1,000,000).
	MaxOpsPerClient int
	// MaxTools keeps only the first MaxTools catalog tools (0 = all).
	MaxTools int
	// Logger receives the gateway's logs (default: discarded).
	Logger *slog.Logger
	// Progress receives a line per phase (default: nothing).
	Progress io.Writer
}

func (c *Config) setDefaults() {
	if c.Upstreams <= 0 {
		c.Upstreams = 50
	}
	if c.Clients <= 0 {
		c.Clients = 200
	}
	if c.Duration <= 0 {
		c.Duration = 60 * time.Second
	}
	if c.MaxOpsPerClient <= 0 {
		c.MaxOpsPerClient = 1_000_000
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
}

// Resources is a snapshot of this process's memory and goroutines.
type Resources struct {
	RSSBytes   uint64 `json:"rss_bytes"` // VmRSS
	HWMBytes   uint64 `json:"hwm_bytes"` // VmHWM: peak RSS so far
	Goroutines int    `json:"goroutines"`
}

// ReadResources reads /proc/self/status (zero sizes where there is none).
func ReadResources() Resources {
	r := Resources{Goroutines: runtime.NumGoroutine()}
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return r
	}
	for _, line := range strings.Split(string(data), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		fields := strings.Fields(val)
		if len(fields) == 0 {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "VmRSS":
			r.RSSBytes = kb << 10
		case "VmHWM":
			r.HWMBytes = kb << 10
		}
	}
	return r
}

// OpStats are the figures of one operation.
type OpStats struct {
	Op        string        `json:"op"`
	Count     int           `json:"count"`
	Errors    int           `json:"errors"`
	P50       time.Duration `json:"p50_ns"`
	P99       time.Duration `json:"p99_ns"`
	Max       time.Duration `json:"max_ns"`
	PerSecond float64       `json:"per_second"`
}

// Report is the outcome of a load test.
type Report struct {
	Upstreams, Stdio, Clients int
	Duration                  time.Duration
	Tools                     int // catalog tools, stdio tools included
	Callable                  int // tools in the call mix
	SetupTime                 time.Duration
	SyncTime                  time.Duration // sync + index build
	Elapsed                   time.Duration // the clients' run
	Ops                       []OpStats
	Total                     OpStats
	ErrorSamples              []string
	// Conns counts the gateway's connections from the clients during the
	// run: accepted, and closed after each connection state (a connection
	// closed while new never carried a request).
	Conns ConnStats
	// ServerLog holds the first lines net/http logged on the gateway's
	// server (recovered handler panics, accept errors); ServerLogLines
	// counts them all.
	ServerLog      []string
	ServerLogLines int
	// Start is before anything was started, Ready after the gateway was
	// synced, Peak the highest seen during the run (HWMBytes is VmHWM),
	// AfterRun once the clients were closed, AfterTeardown once the
	// gateway and the upstreams were stopped.
	Start, Ready, Peak, AfterRun, AfterTeardown Resources
}

// callable is a tool of the call mix.
type callable struct {
	name string // call_name
	args map[string]any
	want string // exact text answer
}

// Run performs a load test.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.setDefaults()
	if cfg.Stdio > 0 && len(cfg.EchoCommand) == 0 {
		return nil, errors.New("loadtest: Stdio > 0 needs EchoCommand (the servers/echo binary)")
	}
	rep := &Report{Upstreams: cfg.Upstreams, Stdio: cfg.Stdio, Clients: cfg.Clients, Duration: cfg.Duration}
	runtime.GC()
	rep.Start = ReadResources()
	setupStart := time.Now()

	tools, err := LoadCatalog(cfg.BenchDirs...)
	if err != nil {
		return nil, err
	}
	if cfg.MaxTools > 0 && len(tools) > cfg.MaxTools {
		tools = tools[:cfg.MaxTools]
	}
	queries, err := LoadQueries(cfg.BenchDirs...)
	if err != nil {
		return nil, err
	}
	if len(queries) == 0 {
		for _, t := range tools {
			queries = append(queries, t.Description)
		}
	}
	buckets := Split(tools, cfg.Upstreams)

	h, err := startHarness(ctx, cfg, buckets)
	if h != nil {
		defer h.close()
	}
	if err != nil {
		return nil, err
	}
	rep.Tools, rep.SyncTime = h.tools, h.syncTime
	calls := h.callables()
	rep.Callable = len(calls)
	if len(calls) == 0 {
		return nil, errors.New("loadtest: no tool can be called with generated arguments")
	}
	rep.SetupTime = time.Since(setupStart)
	runtime.GC()
	rep.Ready = ReadResources()
	fmt.Fprintf(cfg.Progress, "loadtest: %d tools on %d HTTP + %d stdio upstreams (%d in the call mix); setup %s, sync+index %s\n",
		rep.Tools, cfg.Upstreams, cfg.Stdio, rep.Callable, rep.SetupTime.Round(time.Millisecond), rep.SyncTime.Round(time.Millisecond))

	rec := newRecorder()
	rep.Peak = rep.Ready
	stopSampling := sample(&rep.Peak)
	fmt.Fprintf(cfg.Progress, "loadtest: %d clients for %s\n", cfg.Clients, cfg.Duration)
	rep.Elapsed = h.drive(ctx, cfg, calls, queries, rec)
	stopSampling()
	rep.Conns = h.conns.snapshot()

	h.closeClients()
	settle(rep.Ready.Goroutines)
	runtime.GC()
	debug.FreeOSMemory()
	rep.AfterRun = ReadResources()

	h.close()
	settle(rep.Start.Goroutines)
	runtime.GC()
	debug.FreeOSMemory()
	rep.AfterTeardown = ReadResources()
	// VmHWM is the kernel's high-water mark, but the RSS counters behind it
	// are per-CPU approximations: a later VmHWM can read a few pages below
	// an earlier VmRSS. The peak is the highest of everything observed.
	rep.Peak.HWMBytes = max(rep.AfterTeardown.HWMBytes, rep.Peak.HWMBytes, rep.Peak.RSSBytes)

	rep.Ops, rep.Total, rep.ErrorSamples = rec.stats(rep.Elapsed)
	rep.ServerLog, rep.ServerLogLines = h.srvLog.snapshot()
	return rep, nil
}

// harness is the running system under test.
type harness struct {
	dir       string
	upstreams []*Upstream
	stdioIDs  []string
	g         *local.Runtime
	srv       *http.Server
	srvDone   chan struct{}
	url       string
	secret    string
	tools     int
	syncTime  time.Duration
	hc        *http.Client
	tr        *http.Transport
	conns     connTracker
	srvLog    lineLog

	mu      sync.Mutex
	clients []*client.Client
	closed  bool
}

func startHarness(ctx context.Context, cfg Config, buckets [][]UpstreamTool) (*harness, error) {
	dir, err := os.MkdirTemp("", "toolrag-loadtest")
	if err != nil {
		return nil, err
	}
	h := &harness{dir: dir}
	var reg strings.Builder
	reg.WriteString("servers:\n")
	var ids []string
	for i, b := range buckets {
		id := fmt.Sprintf("up%02d", i)
		u, err := StartUpstream(id, b)
		if err != nil {
			return h, err
		}
		h.upstreams = append(h.upstreams, u)
		h.tools += len(b)
		fmt.Fprintf(&reg, "  %s:\n    transport: streamable_http\n    url: %s\n", id, u.URL)
		ids = append(ids, id)
	}
	for i := 0; i < cfg.Stdio; i++ {
		id := fmt.Sprintf("stdio%d", i)
		args, _ := json.Marshal(cfg.EchoCommand[1:])
		fmt.Fprintf(&reg, "  %s:\n    transport: stdio\n    command: %q\n    args: %s\n", id, cfg.EchoCommand[0], args)
		h.stdioIDs = append(h.stdioIDs, id)
		ids = append(ids, id)
		h.tools += 5
	}
	var secret [16]byte
	if _, err := rand.Read(secret[:]); err != nil {
		return h, err
	}
	h.secret = "load-" + hex.EncodeToString(secret[:])
	keys := fmt.Sprintf("keys:\n  - id: load\n    secret: %q\n    servers: {%s}\n", h.secret, strings.Join(ids, ": {}, ")+": {}")
	for name, data := range map[string]string{"registry.yaml": reg.String(), "keys.yaml": keys} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o600); err != nil {
			return h, err
		}
	}
	env := map[string]string{
		"MCP_GATEWAY_CONFIG_DIR":        dir,
		"TOOL_RAG_DB":                   filepath.Join(dir, "tools.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL": "0",
	}
	h.g, err = local.New(ctx, local.Options{Getenv: func(k string) string { return env[k] }, Logger: cfg.Logger})
	if err != nil {
		return h, err
	}
	start := time.Now()
	rep, err := h.g.Sync(ctx, indexer.ModeFull)
	h.syncTime = time.Since(start)
	if err != nil {
		return h, err
	}
	if len(rep.Stale) > 0 {
		return h, fmt.Errorf("loadtest: upstreams unreachable at sync: %v", rep.Stale)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return h, err
	}
	h.url = "http://" + ln.Addr().String() + "/mcp"
	// The gateway's own server settings (local.Run), observed.
	h.srv = httpserve.New(h.g.Handler)
	h.srv.ConnState = h.conns.observe
	h.srv.ErrorLog = log.New(&h.srvLog, "", 0)
	h.srvDone = make(chan struct{})
	go func() {
		defer close(h.srvDone)
		_ = h.srv.Serve(httpserve.IdleUntilFirstByte(ln, h.srv.IdleTimeout))
	}()
	h.tr = http.DefaultTransport.(*http.Transport).Clone()
	h.tr.MaxIdleConns = 4 * max(cfg.Clients, 16)
	h.tr.MaxIdleConnsPerHost = 4 * max(cfg.Clients, 16)
	h.hc = &http.Client{Transport: connTracing{h.tr}}
	return h, nil
}

// callables lists every tool the clients call, with arguments and the
// exact answer expected.
func (h *harness) callables() []callable {
	var out []callable
	for _, u := range h.upstreams {
		for _, t := range u.Tools {
			args, ok := SampleArgs(t.InputSchema)
			if !ok {
				continue
			}
			// The upstream sees the arguments after a JSON round trip.
			b, _ := json.Marshal(args)
			var seen map[string]any
			_ = json.Unmarshal(b, &seen)
			out = append(out, callable{name: u.ID + "__" + t.Name, args: args, want: CannedAnswer(t.Name, seen)})
		}
	}
	for _, id := range h.stdioIDs {
		out = append(out,
			callable{name: id + "__echo", args: map[string]any{"text": "load"}, want: "load"},
			callable{name: id + "__add", args: map[string]any{"a": 2, "b": 3}, want: "5"},
			callable{name: id + "__reverse", args: map[string]any{"text": "abc"}, want: "cba"},
		)
	}
	return out
}

func (h *harness) connect(ctx context.Context, legacy bool) (*client.Client, error) {
	c, err := client.NewStreamableHttpClient(h.url,
		transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + h.secret}),
		transport.WithHTTPBasicClient(h.hc))
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		c.Close()
		return nil, err
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if legacy {
		init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
	}
	init.Params.ClientInfo = mcp.Implementation{Name: "toolrag-loadtest", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, err
	}
	h.mu.Lock()
	h.clients = append(h.clients, c)
	h.mu.Unlock()
	return c, nil
}

// drive runs the clients until the duration ends, ctx is done or each has
// done MaxOpsPerClient operations, and returns how long they ran.
func (h *harness) drive(ctx context.Context, cfg Config, calls []callable, queries []string, rec *recorder) time.Duration {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Connect every client first (at most 32 handshakes at once).
	clients := make([]*client.Client, cfg.Clients)
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i := range clients {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			start := time.Now()
			c, err := h.connect(ctx, i%2 == 0)
			rec.add(OpConnect, time.Since(start), err)
			clients[i] = c
		}(i)
	}
	wg.Wait()

	start := time.Now()
	deadline := start.Add(cfg.Duration)
	for i, c := range clients {
		if c == nil {
			continue
		}
		wg.Add(1)
		go func(i int, c *client.Client) {
			defer wg.Done()
			rng := mrand.New(mrand.NewPCG(uint64(i), 0x70015))
			for n := 0; n < cfg.MaxOpsPerClient && time.Now().Before(deadline) && ctx.Err() == nil; n++ {
				op, run := pick(rng, c, calls, queries)
				t0 := time.Now()
				err := run(ctx)
				rec.add(op, time.Since(t0), err)
			}
		}(i, c)
	}
	wg.Wait()
	return time.Since(start)
}

// pick chooses the next operation: 30% find_tools, 15% describe_tool,
// 40% run_tool, 15% run_tools (three calls).
func pick(rng *mrand.Rand, c *client.Client, calls []callable, queries []string) (string, func(context.Context) error) {
	r := rng.IntN(100)
	switch {
	case r < 30:
		q := queries[rng.IntN(len(queries))]
		return OpFind, func(ctx context.Context) error {
			res, err := call(ctx, c, "find_tools", map[string]any{"query": truncateRunes(q, 2000), "top_k": 5})
			if err != nil {
				return err
			}
			var out struct {
				Results []struct {
					CallName string `json:"call_name"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(res), &out); err != nil || len(out.Results) == 0 {
				return fmt.Errorf("find_tools %q found nothing: %.200s", q, res)
			}
			return nil
		}
	case r < 45:
		t := calls[rng.IntN(len(calls))]
		return OpDescribe, func(ctx context.Context) error {
			res, err := call(ctx, c, "describe_tool", map[string]any{"call_name": t.name})
			if err == nil && !strings.Contains(res, `"call_name":`+strconv.Quote(t.name)) {
				err = fmt.Errorf("describe_tool %s: %.200s", t.name, res)
			}
			return err
		}
	case r < 85:
		t := calls[rng.IntN(len(calls))]
		return OpRun, func(ctx context.Context) error {
			res, err := call(ctx, c, "run_tool", map[string]any{"call_name": t.name, "arguments": t.args})
			if err == nil && res != t.want {
				err = fmt.Errorf("run_tool %s answered %.200q, want %.200q", t.name, res, t.want)
			}
			return err
		}
	default:
		batch := []callable{calls[rng.IntN(len(calls))], calls[rng.IntN(len(calls))], calls[rng.IntN(len(calls))]}
		return OpRunMany, func(ctx context.Context) error {
			list := make([]any, len(batch))
			for i, t := range batch {
				list[i] = map[string]any{"call_name": t.name, "arguments": t.args, "id": strconv.Itoa(i)}
			}
			res, err := call(ctx, c, "run_tools", map[string]any{"calls": list})
			if err != nil {
				return err
			}
			var out struct {
				Results []struct {
					OK     bool   `json:"ok"`
					Error  string `json:"error"`
					Result struct {
						Content []struct {
							Text string `json:"text"`
						} `json:"content"`
					} `json:"result"`
				} `json:"results"`
			}
			if err := json.Unmarshal([]byte(res), &out); err != nil || len(out.Results) != len(batch) {
				return fmt.Errorf("run_tools: %.200s", res)
			}
			for i, r := range out.Results {
				if !r.OK || len(r.Result.Content) == 0 || r.Result.Content[0].Text != batch[i].want {
					return fmt.Errorf("run_tools call %s: ok=%v error=%q", batch[i].name, r.OK, r.Error)
				}
			}
			return nil
		}
	}
}

// call runs a tool and returns its text; a tool error is an error.
func call(ctx context.Context, c *client.Client, name string, args map[string]any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, ct := range res.Content {
		if tc, ok := ct.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("%s: tool error: %.300s", name, b.String())
	}
	return b.String(), nil
}

func truncateRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func (h *harness) closeClients() {
	h.mu.Lock()
	clients := h.clients
	h.clients = nil
	h.mu.Unlock()
	for _, c := range clients {
		c.Close()
	}
	if h.tr != nil {
		h.tr.CloseIdleConnections()
	}
}

// close stops everything (idempotent).
func (h *harness) close() {
	h.closeClients()
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return
	}
	h.closed = true
	h.mu.Unlock()
	if h.srv != nil {
		sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := h.srv.Shutdown(sctx); err != nil {
			h.srv.Close()
		}
		cancel()
		<-h.srvDone
	}
	if h.g != nil {
		h.g.Close()
	}
	for _, u := range h.upstreams {
		u.Close()
	}
	os.RemoveAll(h.dir)
}

// sample records the highest RSS and goroutine count every 200ms until
// the returned stop is called.
func sample(peak *Resources) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(200 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r := ReadResources()
				peak.RSSBytes = max(peak.RSSBytes, r.RSSBytes)
				peak.Goroutines = max(peak.Goroutines, r.Goroutines)
			}
		}
	}()
	return func() { close(done); <-finished }
}

// settle waits for the goroutine count to fall to target, or to stay the
// same for a second (connections the gateway keeps to its upstreams stay
// open after the clients leave), at most 10s.
func settle(target int) {
	deadline := time.Now().Add(10 * time.Second)
	last, since := runtime.NumGoroutine(), time.Now()
	for time.Now().Before(deadline) {
		n := runtime.NumGoroutine()
		if n <= target || time.Since(since) >= time.Second {
			return
		}
		if n != last {
			last, since = n, time.Now()
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// recorder collects latencies and errors per operation.
type recorder struct {
	mu      sync.Mutex
	lat     map[string][]time.Duration
	errs    map[string]int
	samples []string
}

func newRecorder() *recorder {
	return &recorder{lat: map[string][]time.Duration{}, errs: map[string]int{}}
}

func (r *recorder) add(op string, d time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lat[op] = append(r.lat[op], d)
	if err != nil {
		r.errs[op]++
		if len(r.samples) < 10 {
			r.samples = append(r.samples, op+": "+err.Error())
		}
	}
}

func (r *recorder) stats(elapsed time.Duration) (ops []OpStats, total OpStats, samples []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var all []time.Duration
	for _, op := range []string{OpConnect, OpFind, OpDescribe, OpRun, OpRunMany} {
		lat := r.lat[op]
		if len(lat) == 0 {
			continue
		}
		s := summarize(op, lat, r.errs[op], elapsed)
		if op == OpConnect {
			s.PerSecond = 0 // the handshakes happen before the timed run
		} else {
			all = append(all, lat...)
			total.Errors += r.errs[op]
		}
		ops = append(ops, s)
	}
	errs := total.Errors
	total = summarize("total", all, errs, elapsed)
	return ops, total, append([]string(nil), r.samples...)
}

func summarize(op string, lat []time.Duration, errs int, elapsed time.Duration) OpStats {
	sorted := append([]time.Duration(nil), lat...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	s := OpStats{Op: op, Count: len(sorted), Errors: errs}
	if len(sorted) > 0 {
		s.P50 = sorted[(len(sorted)-1)*50/100]
		s.P99 = sorted[(len(sorted)-1)*99/100]
		s.Max = sorted[len(sorted)-1]
	}
	if elapsed > 0 {
		s.PerSecond = float64(len(sorted)) / elapsed.Seconds()
	}
	return s
}

// WriteTable prints the report as a table.
func (r *Report) WriteTable(w io.Writer) {
	fmt.Fprintf(w, "%d clients, %d HTTP + %d stdio upstreams, %d tools (%d in the call mix), ran %s\n",
		r.Clients, r.Upstreams, r.Stdio, r.Tools, r.Callable, r.Elapsed.Round(time.Millisecond))
	fmt.Fprintf(w, "%-14s %9s %7s %10s %10s %10s %10s\n", "operation", "count", "errors", "p50", "p99", "max", "ops/s")
	row := func(s OpStats) {
		rate := fmt.Sprintf("%.1f", s.PerSecond)
		if s.Op == OpConnect {
			rate = "-"
		}
		fmt.Fprintf(w, "%-14s %9d %7d %10s %10s %10s %10s\n", s.Op, s.Count, s.Errors, fmtDur(s.P50), fmtDur(s.P99), fmtDur(s.Max), rate)
	}
	for _, s := range r.Ops {
		row(s)
	}
	row(r.Total)
	mib := func(b uint64) string { return fmt.Sprintf("%.0f MiB", float64(b)/(1<<20)) }
	fmt.Fprintf(w, "RSS: start %s, ready %s, peak %s (VmHWM %s), after run %s, after teardown %s\n",
		mib(r.Start.RSSBytes), mib(r.Ready.RSSBytes), mib(r.Peak.RSSBytes), mib(r.Peak.HWMBytes), mib(r.AfterRun.RSSBytes), mib(r.AfterTeardown.RSSBytes))
	fmt.Fprintf(w, "goroutines: start %d, ready %d, peak %d, after run %d, after teardown %d\n",
		r.Start.Goroutines, r.Ready.Goroutines, r.Peak.Goroutines, r.AfterRun.Goroutines, r.AfterTeardown.Goroutines)
	fmt.Fprintf(w, "setup %s (sync + index %s)\n", r.SetupTime.Round(time.Millisecond), r.SyncTime.Round(time.Millisecond))
	fmt.Fprintf(w, "gateway connections: %d accepted; closed unused %d, idle %d, active %d\n",
		r.Conns.Accepted, r.Conns.ClosedNew, r.Conns.ClosedIdle, r.Conns.ClosedActive)
	for _, s := range r.ErrorSamples {
		fmt.Fprintf(w, "error: %s\n", s)
	}
	if r.ServerLogLines > 0 {
		fmt.Fprintf(w, "gateway server log (%d lines):\n", r.ServerLogLines)
		for _, l := range r.ServerLog {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Second:
		return fmt.Sprintf("%.2fs", d.Seconds())
	case d >= time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%dµs", d.Microseconds())
	}
}
