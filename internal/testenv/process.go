package testenv

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startNode runs the Node 22 script internal/testenv/<script> with args
// and the npm modules of .tools (TOOLRAG_NPM_MODULES), and decodes into
// out the first line it prints that starts with "{": where it listens.
// The script stops when its stdin closes, at cleanup (killed after 5 s).
// what names it in failures; it has wait to say where it listens.
func startNode(t testing.TB, cleanup func(func()), what string, wait time.Duration, out any, script string, args ...string) {
	t.Helper()
	node := Node22(t)
	cmd := exec.Command(node, append([]string{filepath.Join(Root(t), "internal", "testenv", script)}, args...)...)
	cmd.Env = append(os.Environ(), "TOOLRAG_NPM_MODULES="+filepath.Join(ToolsDir(t), "npm", "node_modules"))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr := &Buffer{Max: 64 << 10}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", what, err)
	}
	cleanup(func() {
		stdin.Close()
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	line := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "{") {
				line <- sc.Text()
				break
			}
		}
		close(line)
		io.Copy(io.Discard, stdout) // keep the pipe drained
	}()
	select {
	case l, ok := <-line:
		if !ok {
			t.Fatalf("%s exited: %s", what, stderr.String())
		}
		if err := json.Unmarshal([]byte(l), out); err != nil {
			t.Fatalf("%s said %q: %v", what, l, err)
		}
	case <-time.After(wait):
		t.Fatalf("%s did not start within %v: %s", what, wait, stderr.String())
	}
}

// shared is a program shared by the whole test binary (DynamoDB Local,
// local-kms, Jaeger): started on first use, stopped when Main returns.
type shared[T any] struct {
	once sync.Once
	v    T // where it listens
	err  error
}

// get returns s's program, starting it with start on first use: up to
// three attempts (another process can take a free port before the program
// binds it). start returns the function that stops it. A test fails when
// no attempt succeeded; what names the program.
func (s *shared[T]) get(t testing.TB, what string, start func() (T, func(), error)) T {
	t.Helper()
	s.once.Do(func() {
		for range 3 {
			var stop func()
			if s.v, stop, s.err = start(); s.err == nil {
				registerAtExit(stop)
				return
			}
		}
	})
	if s.err != nil {
		t.Fatalf("testenv: %s did not start: %v", what, s.err)
	}
	return s.v
}

// startDaemon starts cmd, a program shared by the whole test binary, and
// waits (up to wait) until ready says it answers. It is started with
// PR_SET_PDEATHSIG=SIGKILL from an OS thread that lives as long as the
// program, so the kernel kills it when the test binary exits or crashes:
// none outlives its tests. stop kills it. what names it in errors.
func startDaemon(cmd *exec.Cmd, what string, wait time.Duration, ready func(*http.Client) bool) (stop func(), err error) {
	out := &Buffer{Max: 64 << 10}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	started := make(chan error, 1)
	exited := make(chan struct{})
	go func() {
		// Pdeathsig fires when the thread that started the child exits, so
		// the child is started from a locked thread that stays alive until
		// the child exits.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			close(exited)
			return
		}
		started <- nil
		_ = cmd.Wait()
		close(exited)
	}()
	if err := <-started; err != nil {
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	stop = func() {
		_ = cmd.Process.Kill()
		<-exited
	}
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(wait)
	for {
		select {
		case <-exited:
			return nil, fmt.Errorf("%s exited before it answered: %s", what, tail(out.String()))
		default:
		}
		// The port was free when it was picked, but another process may
		// have taken it meanwhile (then the program exits and something
		// else answers): only an answer while it still runs counts.
		if ready(client) {
			select {
			case <-exited:
				return nil, fmt.Errorf("%s exited (its port taken?): %s", what, tail(out.String()))
			default:
				return stop, nil
			}
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("%s did not answer within %v: %s", what, wait, tail(out.String()))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// tail is the end of a program's output, for an error.
func tail(s string) string {
	if len(s) > 2000 {
		return "..." + s[len(s)-2000:]
	}
	return s
}
