package upstream

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// Per-call cost of the two protocol eras against the same Go upstream
// (servers/echo, mcp-go server), through the Manager:
//
//	go test ./pkg/upstream -run '^$' -bench 'EraCall' -benchtime 10000x -count 3
//
// era=2026-07-28 is what the client negotiates by itself with servers/echo;
// era=2025-11-25 pins the legacy handshake. Besides ns/op (the inverse of
// ops/s for the parallel runs) each reports the CPU time per call of this
// process (cpu-µs/op) and of the upstream process (upstream-cpu-µs/op).
// Figures are in docs/benchmarks.md.

const legacyEra = "2025-11-25"

func BenchmarkEraCall(b *testing.B) {
	for _, era := range []string{mcp.LATEST_PROTOCOL_VERSION, legacyEra} {
		for _, mode := range []string{"serial", "parallel"} {
			// upstream=mcpgo runs servers/echo without its stateless
			// tools/call fast path (internal/mcpfix), for comparison.
			for _, up := range []string{"fast", "mcpgo"} {
				b.Run("transport=stdio/era="+era+"/"+mode+"/upstream="+up, func(b *testing.B) {
					m, _ := newTestManager(b, Options{IdleTimeout: -1, StdioPoolSize: 1})
					cfg := echoConfig()
					cfg.Env = map[string]string{"ECHO_CPUPROFILE": os.Getenv("ECHO_CPUPROFILE")} // profile the upstream when set
					if up == "mcpgo" {
						cfg.Env["ECHO_MCPGO_ONLY"] = "1"
					}
					m.SetServers(map[string]ServerConfig{"echo": cfg})
					if era != mcp.LATEST_PROTOCOL_VERSION {
						m.pool(b, "echo").protocol = era // as if negotiated before
					}
					benchEraCalls(b, m, era, mode, func() []int { return m.pool(b, "echo").livePIDs() })
				})
			}
		}
	}
	// Over Streamable HTTP neither side has a fast path (servers/echo -http
	// is mcp-go's StreamableHTTPServer, the client mcp-go's CallTool).
	for _, era := range []string{mcp.LATEST_PROTOCOL_VERSION, legacyEra} {
		for _, mode := range []string{"serial", "parallel"} {
			b.Run("transport=http/era="+era+"/"+mode, func(b *testing.B) {
				url, pid := startEchoHTTP(b)
				m, _ := newTestManager(b, Options{IdleTimeout: -1})
				m.SetServers(map[string]ServerConfig{"echo": {Transport: TransportStreamableHTTP, URL: url}})
				if era != mcp.LATEST_PROTOCOL_VERSION {
					pinHTTPEra(b, m, era)
				}
				benchEraCalls(b, m, era, mode, func() []int { return []int{pid} })
			})
		}
	}
}

// startEchoHTTP runs servers/echo -http on a free port of 127.0.0.1 and
// returns its URL and pid.
func startEchoHTTP(b *testing.B) (string, int) {
	b.Helper()
	cmd := exec.Command(echoBin, "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		b.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		b.Fatalf("servers/echo -http: %v", err)
	}
	i := strings.Index(line, "http://")
	if i < 0 {
		b.Fatalf("servers/echo -http said %q", line)
	}
	go func() { _, _ = io.Copy(io.Discard, stderr) }()
	return strings.TrimSpace(line[i:]), cmd.Process.Pid
}

// benchEraCalls warms the connection up, checks the era it speaks, and
// measures echo calls serially or from 32 goroutines.
func benchEraCalls(b *testing.B, m *Manager, era, mode string, pids func() []int) {
	ctx := context.Background()
	if _, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": "warm"}); err != nil {
		b.Fatal(err)
	}
	info, err := m.Info(ctx, "echo")
	if err != nil {
		b.Fatal(err)
	}
	if info.ProtocolVersion != era {
		b.Fatalf("negotiated %s, want %s", info.ProtocolVersion, era)
	}
	args := map[string]any{"text": "hi"}
	self0, up0 := testenv.ProcessCPU(), procsCPU(pids())
	b.ResetTimer()
	if mode == "serial" {
		for b.Loop() {
			if _, err := m.CallTool(ctx, "echo", "echo", args); err != nil {
				b.Fatal(err)
			}
		}
	} else {
		b.SetParallelism(16) // 32 callers on 2 CPUs
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := m.CallTool(ctx, "echo", "echo", args); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(testenv.ProcessCPU()-self0)/1e3/n, "cpu-µs/op")
	b.ReportMetric(float64(procsCPU(pids())-up0)/1e3/n, "upstream-cpu-µs/op")
}

// procsCPU is the user+system CPU time of the processes pids, in ns, from
// /proc/<pid>/stat (clock ticks of 10 ms on Linux: use over many calls).
func procsCPU(pids []int) int64 {
	var total int64
	for _, pid := range pids {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid ... utime(12) stime(13)
		if len(f) < 13 {
			continue
		}
		u, _ := strconv.ParseInt(f[11], 10, 64)
		st, _ := strconv.ParseInt(f[12], 10, 64)
		total += (u + st) * 1e7 // USER_HZ = 100
	}
	return total
}

// pinHTTPEra makes the HTTP backend of "echo" negotiate era from its next
// connection on, as if it had negotiated it before.
func pinHTTPEra(b *testing.B, m *Manager, era string) {
	b.Helper()
	hb := m.httpBackend(b, "echo")
	hb.mu.Lock()
	hb.protocol = era
	hb.mu.Unlock()
}
