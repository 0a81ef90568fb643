package upstream

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// everything is a running @modelcontextprotocol/server-everything in sse or
// streamableHttp mode.
type everything struct {
	t    testing.TB
	bin  string
	mode string
	port int
	cmd  *exec.Cmd
	done chan struct{} // closed when cmd has exited
	out  *testenv.Buffer
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startEverything runs server-everything in mode on a free port and waits
// until it listens. The port is picked before the server binds it, so
// another process can take it in between; then another port is tried.
func startEverything(t testing.TB, mode string) *everything {
	t.Helper()
	e := &everything{t: t, bin: testenv.NPMBin(t, "mcp-server-everything"), mode: mode}
	t.Cleanup(e.stop)
	for try := 0; ; try++ {
		e.port = freePort(t)
		err := e.tryStart()
		if err == nil {
			return e
		}
		if try == 2 {
			t.Fatal(err)
		}
		t.Logf("%v; trying another port", err)
	}
}

// start (re)starts the server on its port.
func (e *everything) start() {
	e.t.Helper()
	if err := e.tryStart(); err != nil {
		e.t.Fatal(err)
	}
}

// tryStart runs the server and waits for it to say it listens on e.port
// (a successful dial could reach another process that holds the port).
func (e *everything) tryStart() error {
	e.out = &testenv.Buffer{}
	e.cmd = exec.Command(e.bin, e.mode)
	e.cmd.Env = append(os.Environ(), "PORT="+strconv.Itoa(e.port))
	e.cmd.Stdout, e.cmd.Stderr = e.out, e.out
	e.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := e.cmd.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	e.done = done
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(done) }(e.cmd)
	listening := fmt.Sprintf("on port %d", e.port)
	deadline := time.After(30 * time.Second)
	for !strings.Contains(e.out.String(), listening) {
		if strings.Contains(e.out.String(), "already in use") { // streamableHttp logs it and stays up
			e.stop()
			return fmt.Errorf("server-everything %s: port %d is taken: %s", e.mode, e.port, e.out.String())
		}
		select {
		case <-done:
			err := fmt.Errorf("server-everything %s exited before it listened on %s: %s", e.mode, e.addr(), e.out.String())
			e.stop()
			return err
		case <-deadline:
			e.stop()
			return fmt.Errorf("server-everything %s did not listen on %s within 30s: %s", e.mode, e.addr(), e.out.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	return nil
}

func (e *everything) stop() {
	if e.cmd == nil || e.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(-e.cmd.Process.Pid, syscall.SIGKILL)
	<-e.done
	e.cmd = nil
}

func (e *everything) addr() string { return "127.0.0.1:" + strconv.Itoa(e.port) }

func (e *everything) config() ServerConfig {
	if e.mode == "sse" {
		return ServerConfig{Transport: TransportSSE, URL: "http://" + e.addr() + "/sse"}
	}
	return ServerConfig{Transport: TransportStreamableHTTP, URL: "http://" + e.addr() + "/mcp"}
}

func TestServerEverythingAllTransports(t *testing.T) {
	bin := testenv.NPMBin(t, "mcp-server-everything")
	cfgs := map[string]ServerConfig{
		"stdio": {Transport: TransportStdio, Command: bin, Args: []string{"stdio"}},
		"sse":   startEverything(t, "sse").config(),
		"http":  startEverything(t, "streamableHttp").config(),
	}
	m, _ := newTestManager(t, Options{})
	m.SetServers(cfgs)
	ctx := ctxT(t, 60*time.Second)

	for id := range cfgs {
		t.Run(id, func(t *testing.T) {
			info, err := m.Info(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(info.Name, "everything") {
				t.Errorf("Info.Name = %q", info.Name)
			}
			tools, err := m.ListTools(ctx, id)
			if err != nil {
				t.Fatal(err)
			}
			if !hasTool(tools, "echo") || len(tools) < 10 {
				t.Errorf("ListTools = %d tools, echo present: %v", len(tools), hasTool(tools, "echo"))
			}
			res, err := m.CallTool(ctx, id, "echo", map[string]any{"message": "hi " + id})
			if err != nil || resultText(t, res) != "Echo: hi "+id {
				t.Errorf("CallTool(echo) = %v, %v", res, err)
			}
			resources, err := m.ListResources(ctx, id)
			if err != nil || len(resources) == 0 {
				t.Fatalf("ListResources = %d, %v", len(resources), err)
			}
			rr, err := m.ReadResource(ctx, id, resources[0].URI)
			if err != nil || len(rr.Contents) == 0 {
				t.Errorf("ReadResource(%s) = %v, %v", resources[0].URI, rr, err)
			}
			if tmpl, err := m.ListResourceTemplates(ctx, id); err != nil || len(tmpl) == 0 {
				t.Errorf("ListResourceTemplates = %d, %v", len(tmpl), err)
			}
			prompts, err := m.ListPrompts(ctx, id)
			if err != nil || !hasPrompt(prompts, "simple-prompt") {
				t.Fatalf("ListPrompts = %v, %v", prompts, err)
			}
			pr, err := m.GetPrompt(ctx, id, "simple-prompt", nil)
			if err != nil || len(pr.Messages) == 0 {
				t.Errorf("GetPrompt = %v, %v", pr, err)
			}
			if err := m.Ping(ctx, id); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}
}

func hasTool(tools []mcp.Tool, name string) bool {
	for _, tl := range tools {
		if tl.Name == name {
			return true
		}
	}
	return false
}

func hasPrompt(prompts []mcp.Prompt, name string) bool {
	for _, p := range prompts {
		if p.Name == name {
			return true
		}
	}
	return false
}

// TestHTTPSessionLoss restarts the server between calls: the old session is
// gone, and the Manager must open a new one without the caller noticing.
func TestHTTPSessionLoss(t *testing.T) {
	for _, mode := range []string{"streamableHttp", "sse"} {
		t.Run(mode, func(t *testing.T) {
			e := startEverything(t, mode)
			m, logs := newTestManager(t, Options{})
			m.SetServers(map[string]ServerConfig{"ev": e.config()})
			ctx := ctxT(t, 60*time.Second)
			call := func(text string) error {
				res, err := m.CallTool(ctx, "ev", "echo", map[string]any{"message": text})
				if err != nil {
					return err
				}
				if got := resultText(t, res); got != "Echo: "+text {
					return fmt.Errorf("got %q", got)
				}
				return nil
			}
			if err := call("before"); err != nil {
				t.Fatal(err)
			}
			b := m.httpBackend(t, "ev")
			first := b.current()

			e.stop()
			e.start()
			if err := call("after"); err != nil {
				t.Fatalf("call after the restart: %v\nlogs:\n%s", err, logs)
			}
			if second := b.current(); second == nil || second == first {
				t.Errorf("the session was not re-established")
			}
			if _, err := m.ListTools(ctx, "ev"); err != nil {
				t.Errorf("ListTools on the new session: %v", err)
			}

			// While the server is down, calls fail clearly; once it is back,
			// they work again.
			e.stop()
			err := call("down")
			if err == nil || !strings.Contains(err.Error(), `upstream "ev": tools/call failed: `) {
				t.Errorf("call while down: %v", err)
			}
			e.start()
			if err := call("back"); err != nil {
				t.Errorf("call after coming back: %v", err)
			}
		})
	}
}

func (m *Manager) httpBackend(t testing.TB, id string) *httpBackend {
	t.Helper()
	m.mu.RLock()
	defer m.mu.RUnlock()
	b, ok := m.servers[id].b.(*httpBackend)
	if !ok {
		t.Fatalf("%s is not an HTTP server", id)
	}
	return b
}

func (b *httpBackend) current() *httpConn {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.cur
}
