package testenv

import (
	"bufio"
	"io"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
)

// StartEcho runs servers/echo over Streamable HTTP on a loopback port it
// picks itself (no other process can take the port between the pick and
// the listen) and returns its MCP URL. The process is killed at cleanup.
func StartEcho(t testing.TB) string {
	t.Helper()
	url, _ := StartEchoAt(t, "127.0.0.1:0")
	return url
}

// StartEchoAt runs servers/echo -http addr with extra arguments (a marker
// tests find the process by, say) and returns its MCP URL once the process
// itself says it listens: a dial test would also succeed against another
// process that took the port. With port 0 the server picks a free port.
// stop kills it (also done at cleanup).
func StartEchoAt(t testing.TB, addr string, args ...string) (url string, stop func()) {
	t.Helper()
	cmd := exec.Command(GoBinary(t, "./servers/echo"), append([]string{"-http", addr}, args...)...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	stop = func() { once.Do(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) }
	t.Cleanup(stop)
	found := make(chan string, 1)
	var said strings.Builder // what it printed before serving, for the failure
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if _, url, ok := strings.Cut(sc.Text(), "serving Streamable HTTP on "); ok {
				found <- url
				break
			}
			said.WriteString(sc.Text() + "\n")
		}
		close(found)
		_, _ = io.Copy(io.Discard, stderr) // keep the pipe drained
	}()
	select {
	case url, ok := <-found:
		if !ok {
			stop()
			t.Fatalf("servers/echo -http %s exited before it served: %s", addr, said.String())
		}
		return url, stop
	case <-time.After(15 * time.Second):
		stop()
		t.Fatalf("servers/echo -http %s did not say where it serves within 15s", addr)
	}
	return "", stop
}
