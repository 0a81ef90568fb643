package upstream

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// echoBin is servers/echo, built once for the whole package.
var echoBin string

func TestMain(m *testing.M) {
	var err error
	if echoBin, err = testenv.BuildGoBinary(".", "github.com/toolrag/mcp-gateway/servers/echo"); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testenv.Main(m) // removes the built binary
}

// newTestManager returns a Manager whose Close is checked at cleanup: every
// process it started must be gone, with its whole process group.
func newTestManager(t testing.TB, opts Options) (*Manager, *testenv.Buffer) {
	t.Helper()
	logs := &testenv.Buffer{}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	m := NewManager(opts)
	t.Cleanup(func() {
		pids := m.startedPIDs()
		if err := m.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		for _, pid := range pids {
			if alive := groupMembers(pid); len(alive) > 0 {
				t.Errorf("after Close, process group %d still has processes %v", pid, alive)
			}
		}
	})
	return m, logs
}

// startedPIDs lists every process the Manager's stdio pools ever started.
func (m *Manager) startedPIDs() []int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var pids []int
	for _, s := range m.servers {
		if p, ok := s.b.(*stdioPool); ok {
			p.mu.Lock()
			pids = append(pids, p.history...)
			p.mu.Unlock()
		}
	}
	return pids
}

func (m *Manager) pool(t testing.TB, id string) *stdioPool {
	t.Helper()
	m.mu.RLock()
	defer m.mu.RUnlock()
	s, ok := m.servers[id]
	if !ok {
		t.Fatalf("no server %q", id)
	}
	p, ok := s.b.(*stdioPool)
	if !ok {
		t.Fatalf("server %q is not stdio", id)
	}
	return p
}

// livePIDs returns the pids of the pool's current processes.
func (p *stdioPool) livePIDs() []int {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []int
	for _, pr := range p.procs {
		select {
		case <-pr.spawned:
			if pr.pid > 0 && !pr.isExited() {
				out = append(out, pr.pid)
			}
		default:
		}
	}
	return out
}

func (p *stdioPool) startedCount() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.started
}

// groupMembers lists the processes (zombies included) in process group pgid.
func groupMembers(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(s[i+1:]) // state ppid pgrp ...
		if len(f) > 2 && f[2] == strconv.Itoa(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// processExists reports whether pid is a process (a zombie counts).
func processExists(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

func echoConfig(args ...string) ServerConfig {
	return ServerConfig{Transport: TransportStdio, Command: echoBin, Args: args}
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

var _ = io.Discard
