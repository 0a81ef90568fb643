package main

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// servedGateway is the built `toolrag serve` running as a process.
type servedGateway struct {
	port   int
	cmd    *exec.Cmd
	logs   *testenv.Buffer
	exited chan error
}

// startServe runs `toolrag serve` (bin) on a free loopback port with the
// config files files (name → content) and the environment env added; it is
// killed at cleanup. It returns once the gateway listens.
func startServe(t *testing.T, bin string, files map[string]string, env ...string) *servedGateway {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &servedGateway{port: ln.Addr().(*net.TCPAddr).Port, logs: &testenv.Buffer{}, exited: make(chan error, 1)}
	ln.Close()
	s.cmd = exec.Command(bin, "serve")
	s.cmd.Env = append(append(os.Environ(), "MCP_GATEWAY_CONFIG_DIR="+dir, "MCP_GATEWAY_HOST=127.0.0.1", fmt.Sprintf("MCP_GATEWAY_PORT=%d", s.port),
		"TOOL_RAG_DB="+filepath.Join(dir, "t.db"), "TOOL_RAG_HEALTHCHECK_INTERVAL=0"), env...)
	s.cmd.Stdout, s.cmd.Stderr = s.logs, s.logs
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.exited <- s.cmd.Wait() }()
	t.Cleanup(func() {
		_ = s.cmd.Process.Kill()
		if t.Failed() {
			t.Logf("toolrag serve output:\n%s", s.logs.String())
		}
	})
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", s.port)); err == nil {
			c.Close()
			return s
		}
		select {
		case err := <-s.exited:
			t.Fatalf("toolrag serve exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("toolrag serve did not listen within 60 s")
		}
	}
}

func (s *servedGateway) url() string { return fmt.Sprintf("http://127.0.0.1:%d/mcp", s.port) }

// From outside: the built `toolrag serve`, with default settings, answers
// a result over MCP_GATEWAY_MAX_RESULT_BYTES (8 MiB) with a preview and a
// resource_link; resources/read and the link's signed URL give back every
// byte; another key's resources/read is "not found", and a signed URL with
// another signature is refused.
func TestLongCallsLargeResultServeBinary(t *testing.T) {
	bin := testenv.GoBinary(t, "./cmd/toolrag")
	big, _ := testenv.StartEchoAt(t, "127.0.0.1:0", "-big")
	gw := startServe(t, bin, map[string]string{
		"registry.yaml": fmt.Sprintf("servers:\n  big:\n    transport: streamable_http\n    url: %s\n", big),
		"keys.yaml":     "keys:\n  - id: owner\n    secret: k-owner\n    servers:\n      big: {}\n  - id: other\n    secret: k-other\n    servers:\n      big: {}\n",
	})
	const size = 12_000_000
	owner, _ := testenv.Connect(t, gw.url(), testenv.MCPClient{Key: "k-owner"})
	other, _ := testenv.Connect(t, gw.url(), testenv.MCPClient{Key: "k-other"})
	args := map[string]any{"call_name": "big__big", "arguments": map[string]any{"bytes": size}}
	// Retried until the catalog has the tool (the first sync runs at start).
	deadline := time.Now().Add(90 * time.Second)
	res, err := testenv.CallTool(owner, time.Minute, "run_tool", args)
	for (err != nil || res.IsError) && time.Now().Before(deadline) {
		time.Sleep(500 * time.Millisecond)
		res, err = testenv.CallTool(owner, time.Minute, "run_tool", args)
	}
	if err != nil || res.IsError {
		t.Fatalf("run_tool big__big: %v %.300s", err, testenv.Text(res))
	}
	link, preview := testenv.StoredResult(t, res)
	if !strings.HasPrefix(preview, "00000000\n") || link.Size == nil || *link.Size != size {
		t.Fatalf("preview %.40q, link %+v", preview, link)
	}
	want := []byte(testenv.BigText(size))
	got, err := testenv.ReadText(owner, link.URI)
	if err != nil || !bytes.Equal([]byte(got), want) {
		t.Fatalf("resources/read: %v, %d bytes (want the %d of the result, byte for byte)", err, len(got), size)
	}
	body, status := testenv.DownloadResult(t, link, "")
	if status != http.StatusOK || !bytes.Equal(body, want) {
		t.Fatalf("signed URL: HTTP %d, %d bytes (want the %d of the result, byte for byte)", status, len(body), size)
	}
	if _, err := testenv.ReadText(other, link.URI); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("another key's resources/read: %v, want not found", err)
	}
	if _, status := testenv.DownloadResult(t, link, "0"); status != http.StatusNotFound {
		t.Errorf("a signed URL with another signature: HTTP %d, want 404", status)
	}
}
