package peerbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// target is one way to reach server-everything's echo tool.
type target struct {
	name    string
	url     string // Streamable HTTP endpoint; "" for stdio
	stdio   []string
	tool    string
	args    map[string]any
	headers map[string]string
	cmd     *exec.Cmd
	out     *tailBuffer
	note    string // what it is, for the table
}

// tailBuffer keeps the last 8 KiB a process wrote, for error messages.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if len(t.buf) > 8<<10 {
		t.buf = append([]byte(nil), t.buf[len(t.buf)-8<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(bytes.TrimSpace(t.buf))
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("pick a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// start runs the target's process in its own process group.
func (t *target) start(argv []string, env []string) error {
	t.out = &tailBuffer{}
	t.cmd = exec.Command(argv[0], argv[1:]...)
	t.cmd.Env = append(os.Environ(), env...)
	t.cmd.Stdout, t.cmd.Stderr = t.out, t.out
	t.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := t.cmd.Start(); err != nil {
		return fmt.Errorf("%s: start %s: %w", t.name, argv[0], err)
	}
	return nil
}

// pid is the root of the target's process tree (0 for the direct stdio
// baseline, whose process belongs to the session).
func (t *target) pid() int {
	if t.cmd == nil || t.cmd.Process == nil {
		return 0
	}
	return t.cmd.Process.Pid
}

// stop kills the target's process group and reaps it.
func (t *target) stop() {
	if t.cmd == nil || t.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = t.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = syscall.Kill(-t.cmd.Process.Pid, syscall.SIGKILL)
		<-done
	}
}

// exited reports whether the target's process has ended (with its output).
func (t *target) exited() error {
	if t.cmd == nil || t.cmd.ProcessState == nil {
		return nil
	}
	return fmt.Errorf("%s exited: %s", t.name, t.out.String())
}

// Names of the targets, in the order of the table.
const (
	StdioDirect  = "stdio (direct)"
	Upstream     = "server-everything streamableHttp"
	Bridge       = "toolrag bridge"
	Serve        = "toolrag serve"
	Supergateway = "supergateway --stateful"
	MCPProxy     = "mcp-proxy"
)

// AllTargets lists every target name.
var AllTargets = []string{StdioDirect, Upstream, Bridge, Serve, Supergateway, MCPProxy}

// ServeGo is serve in front of servers/echo, an mcp-go stdio server (the
// gateway speaks 2026-07-28 with it), when Config.GoEcho is set.
const ServeGo = "toolrag serve → servers/echo"

// Baseline targets run the bridge and serve of another toolrag binary
// (Config.Baseline), for before/after figures in the same rounds.
const baselineSuffix = " (baseline)"

var (
	BridgeBaseline  = Bridge + baselineSuffix
	ServeBaseline   = Serve + baselineSuffix
	ServeGoBaseline = ServeGo + baselineSuffix
)

// newTarget starts the named target on a free loopback port.
func newTarget(ctx context.Context, name string, cfg Config, work string) (*target, error) {
	everything := filepath.Join(cfg.NodeModules, ".bin", "mcp-server-everything")
	if _, err := os.Stat(everything); err != nil {
		return nil, fmt.Errorf("server-everything is not installed in %s (run scripts/peers.sh): %w", cfg.NodeModules, err)
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	t := &target{name: name, url: "http://" + addr + "/mcp", tool: "echo", args: map[string]any{"message": "hello"}}
	toolrag, goEcho := cfg.Toolrag, cfg.GoEcho
	if base, ok := strings.CutSuffix(name, baselineSuffix); ok && cfg.Baseline != "" {
		name, toolrag = base, cfg.Baseline
		if cfg.BaselineGoEcho != "" {
			goEcho = cfg.BaselineGoEcho
		}
	}
	switch name {
	case StdioDirect:
		t.url, t.stdio = "", []string{everything, "stdio"}
		t.note = "mcp-go stdio client → server-everything stdio (no HTTP)"
		return t, nil
	case Upstream:
		t.note = "server-everything's own Streamable HTTP mode"
		err = t.start([]string{everything, "streamableHttp"}, []string{"PORT=" + strconv.Itoa(port)})
	case Bridge:
		t.note = "toolrag bridge -- server-everything stdio"
		err = t.start([]string{toolrag, "bridge", "--addr", addr, "--connect-timeout", "120s", "--", everything, "stdio"}, nil)
	case Serve:
		t.note = "toolrag serve, admin key, ev__echo → server-everything stdio (pool)"
		t.tool = "ev__echo"
		t.headers = map[string]string{"Authorization": "Bearer " + benchKey}
		env, e := serveConfig(filepath.Join(work, t.name), everything, []string{"stdio"}, addr)
		if e != nil {
			return nil, e
		}
		err = t.start([]string{toolrag, "serve"}, env)
	case ServeGo:
		if goEcho == "" {
			return nil, fmt.Errorf("%s needs the servers/echo binary (--go-echo)", name)
		}
		t.note = "toolrag serve, admin key, ev__echo → servers/echo stdio (mcp-go, 2026-07-28)"
		t.tool, t.args = "ev__echo", map[string]any{"text": "hello"}
		t.headers = map[string]string{"Authorization": "Bearer " + benchKey}
		env, e := serveConfig(filepath.Join(work, t.name), goEcho, nil, addr)
		if e != nil {
			return nil, e
		}
		err = t.start([]string{toolrag, "serve"}, env)
	case Supergateway:
		t.note = "supergateway --stdio --outputTransport streamableHttp --stateful (a server process per session)"
		err = t.start([]string{filepath.Join(cfg.NodeModules, ".bin", "supergateway"), "--stdio", everything + " stdio",
			"--outputTransport", "streamableHttp", "--stateful", "--port", strconv.Itoa(port), "--logLevel", "none"}, nil)
	case MCPProxy:
		t.note = "mcp-proxy --server stream -- server-everything stdio"
		err = t.start([]string{filepath.Join(cfg.NodeModules, ".bin", "mcp-proxy"), "--host", "127.0.0.1", "--port", strconv.Itoa(port),
			"--server", "stream", "--", everything, "stdio"}, nil)
	default:
		return nil, fmt.Errorf("unknown target %q (known: %v)", name, AllTargets)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

// benchKey is the admin key of the serve target (a throwaway config).
const benchKey = "bench-peers-admin-key"

// serveConfig writes a registry with server-everything over stdio and one
// admin key into work, and returns the environment of `toolrag serve`.
func serveConfig(work, command string, args []string, addr string) ([]string, error) {
	dir := work
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("serve config: %w", err)
	}
	registry := fmt.Sprintf("servers:\n  ev:\n    transport: stdio\n    command: %q\n", command)
	if len(args) > 0 {
		registry += fmt.Sprintf("    args: [%q]\n", strings.Join(args, `", "`))
	}
	keys := "keys:\n  - id: bench-admin\n    secret: \"" + benchKey + "\"\n    admin: true\n    servers:\n      ev: {}\n"
	if err := errors.Join(
		os.WriteFile(filepath.Join(dir, "registry.yaml"), []byte(registry), 0o600),
		os.WriteFile(filepath.Join(dir, "keys.yaml"), []byte(keys), 0o600),
	); err != nil {
		return nil, fmt.Errorf("serve config: %w", err)
	}
	host, port, _ := net.SplitHostPort(addr)
	return []string{
		"MCP_GATEWAY_CONFIG_DIR=" + dir,
		"MCP_GATEWAY_REGISTRY_GENERATED=" + filepath.Join(dir, "none.yaml"),
		"MCP_GATEWAY_HOST=" + host,
		"MCP_GATEWAY_PORT=" + port,
		"TOOL_RAG_DB=" + filepath.Join(dir, "catalog.db"),
		// node takes its time to start on a busy machine
		"MCP_GATEWAY_UPSTREAM_CONNECT_TIMEOUT=120",
	}, nil
}
