package testenv

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// StartEcho runs servers/echo over Streamable HTTP on a loopback port it
// picks itself (no other process can take the port between the pick and
// the listen) and returns its MCP URL. The process is killed at cleanup.
func StartEcho(t testing.TB) string {
	t.Helper()
	cmd := exec.Command(GoBinary(t, "./servers/echo"), "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "serving Streamable HTTP on "); ok {
				found <- url
				break
			}
		}
		close(found)
		_, _ = io.Copy(io.Discard, stderr) // keep the pipe drained
	}()
	select {
	case url, ok := <-found:
		if !ok {
			t.Fatal("servers/echo exited before it served")
		}
		return url
	case <-time.After(15 * time.Second):
		t.Fatal("servers/echo did not say where it serves within 15s")
	}
	return ""
}
