// Package peerbench measures the gateway against the tools a user would
// put in front of a stdio MCP server instead: one mcp-go driver calls
// server-everything's echo tool through `toolrag bridge`, `toolrag serve`,
// supergateway, mcp-proxy and server-everything's own Streamable HTTP mode
// (and over stdio directly, the baseline), in interleaved rounds on
// 127.0.0.1. Each round measures serial latency, then 32 concurrent
// sessions; CPU time and peak memory are read from /proc for each
// target's whole process tree. `toolrag-lab bench-peers` prints the table.
package peerbench

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Config says what to run and how long.
type Config struct {
	// NodeModules holds supergateway, mcp-proxy and server-everything
	// (.tools/peers/node_modules, installed by scripts/peers.sh).
	NodeModules string
	// Toolrag is the toolrag binary for the bridge and serve targets.
	Toolrag string
	// Baseline is another toolrag binary (an older build, say) whose
	// bridge and serve are measured in the same rounds ("" = none).
	Baseline string
	// GoEcho is a servers/echo binary: serve is also measured in front of
	// it (ServeGo), an mcp-go upstream on protocol 2026-07-28 ("" = not).
	GoEcho string
	// BaselineGoEcho, when set, is the servers/echo binary the baseline's
	// serve is measured in front of (the same build as Baseline), instead
	// of GoEcho.
	BaselineGoEcho string
	// Targets to measure (default AllTargets).
	Targets []string
	// Rounds of every target, interleaved (default 3).
	Rounds int
	// SerialCalls per round (default 1000: CPU time is read in 10 ms ticks).
	SerialCalls int
	// Sessions in the concurrent phase (default 32).
	Sessions int
	// Duration of the concurrent phase per round (default 5s).
	Duration time.Duration
	// Protocol the driver asks for ("" lets mcp-go negotiate, which picks
	// 2026-07-28 where the server speaks it; default 2025-11-25, which
	// every target speaks).
	Protocol string
	// Progress receives a line per phase (nil: quiet).
	Progress func(string)
}

func (c Config) withDefaults() Config {
	if len(c.Targets) == 0 {
		c.Targets = AllTargets
		if c.GoEcho != "" {
			c.Targets = append(slices.Clone(c.Targets), ServeGo)
		}
		if c.Baseline != "" {
			c.Targets = append(slices.Clone(c.Targets), BridgeBaseline, ServeBaseline)
			if c.GoEcho != "" {
				c.Targets = append(c.Targets, ServeGoBaseline)
			}
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = 3
	}
	if c.SerialCalls <= 0 {
		c.SerialCalls = 1000
	}
	if c.Sessions <= 0 {
		c.Sessions = 32
	}
	if c.Duration <= 0 {
		c.Duration = 5 * time.Second
	}
	if c.Progress == nil {
		c.Progress = func(string) {}
	}
	return c
}

// Round is one round's figures for one target.
type Round struct {
	SerialP50, SerialP99 time.Duration
	SerialCPU            time.Duration // CPU time of the target's tree per serial call
	SerialOwnCPU         time.Duration // of its root process alone (the proxy without the servers it runs)
	Ops                  float64       // concurrent calls per second
	ConcP50, ConcP99     time.Duration
	ConcCPU              time.Duration // CPU time of the target's tree per concurrent call
	ConcOwnCPU           time.Duration // of its root process alone
	Errors               int
}

// Result is every round of one target.
type Result struct {
	Name, Note, Protocol string
	Rounds               []Round
	PeakRSS              int64 // bytes, the process tree's highest sampled total
	Procs                int   // processes in the tree at its peak
}

// Run measures every target and returns the results in cfg.Targets order.
func Run(ctx context.Context, cfg Config) ([]*Result, error) {
	cfg = cfg.withDefaults()
	work, err := os.MkdirTemp("", "toolrag-bench-peers-")
	if err != nil {
		return nil, fmt.Errorf("bench-peers: %w", err)
	}
	defer os.RemoveAll(work)

	targets := make([]*target, 0, len(cfg.Targets))
	defer func() {
		for _, t := range targets {
			t.stop()
		}
	}()
	for _, name := range cfg.Targets {
		t, err := newTarget(ctx, name, cfg, work)
		if err != nil {
			return nil, err
		}
		targets = append(targets, t)
	}
	results := make([]*Result, len(targets))
	for i, t := range targets {
		r, err := ready(ctx, t, cfg)
		if err != nil {
			return nil, err
		}
		results[i] = r
		cfg.Progress(fmt.Sprintf("%s ready (%s)", t.name, r.Protocol))
	}
	for round := 0; round < cfg.Rounds; round++ {
		for k := range targets {
			i := (k + round) % len(targets) // rotate the order each round
			t, res := targets[i], results[i]
			r, err := measure(ctx, t, res, cfg)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", t.name, round+1, err)
			}
			res.Rounds = append(res.Rounds, r)
			cfg.Progress(fmt.Sprintf("round %d %-34s serial p50 %.2f ms  concurrent %.0f ops/s", round+1, t.name, ms(r.SerialP50), r.Ops))
		}
	}
	return results, nil
}

// ready waits until the target answers a call and returns its result
// record with the negotiated protocol.
func ready(ctx context.Context, t *target, cfg Config) (*Result, error) {
	deadline := time.Now().Add(180 * time.Second)
	var last error
	for time.Now().Before(deadline) {
		if err := t.exited(); err != nil {
			return nil, err
		}
		s, err := openSession(ctx, t, cfg)
		if err == nil {
			_, err = s.call(ctx)
			proto := s.c.ProtocolVersion()
			s.close()
			if err == nil {
				return &Result{Name: t.name, Note: t.note, Protocol: proto}, nil
			}
		}
		last = err
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(300 * time.Millisecond):
		}
	}
	return nil, fmt.Errorf("%s did not answer a call within 180s: %v; its output: %s", t.name, last, t.out.String())
}

// session is one MCP client connection.
type session struct {
	c    *client.Client
	t    *target
	hc   *http.Client
	proc *exec.Cmd // the direct stdio target's process
}

func openSession(ctx context.Context, t *target, cfg Config) (*session, error) {
	s := &session{t: t}
	var tr transport.Interface
	if t.stdio != nil {
		cmd := exec.Command(t.stdio[0], t.stdio[1:]...)
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", t.stdio[0], err)
		}
		s.proc = cmd
		tr = transport.NewIO(out, in, nil)
	} else {
		// One connection per session, kept alive: the default transport
		// keeps 2 idle connections per host, which would make 32 sessions
		// dial for most calls.
		s.hc = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4, IdleConnTimeout: time.Minute}}
		h, err := transport.NewStreamableHTTP(t.url, transport.WithHTTPHeaders(t.headers), transport.WithHTTPBasicClient(s.hc))
		if err != nil {
			return nil, err
		}
		tr = h
	}
	s.c = client.NewClient(tr)
	if err := s.c.Start(ctx); err != nil {
		s.close()
		return nil, err
	}
	req := mcp.InitializeRequest{}
	req.Params.ProtocolVersion = cfg.Protocol
	req.Params.ClientInfo = mcp.Implementation{Name: "toolrag-bench-peers", Version: "1"}
	ictx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if _, err := s.c.Initialize(ictx, req); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *session) call(ctx context.Context) (time.Duration, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = s.t.tool
	req.Params.Arguments = s.t.args
	start := time.Now()
	res, err := s.c.CallTool(ctx, req)
	d := time.Since(start)
	if err != nil {
		return d, err
	}
	if res.IsError || len(res.Content) == 0 {
		return d, fmt.Errorf("the tool failed: %+v", res.Content)
	}
	return d, nil
}

func (s *session) close() {
	_ = s.c.Close()
	if s.proc != nil {
		_ = s.proc.Process.Kill()
		_ = s.proc.Wait()
	}
	if s.hc != nil {
		s.hc.CloseIdleConnections()
	}
}

// sampler records the peak memory of a process tree while a phase runs.
type sampler struct {
	stop chan struct{}
	done chan struct{}
}

func sample(root func() int, res *Result) *sampler {
	s := &sampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			if pid := root(); pid > 0 {
				if u := tree(pid); u.rssBytes > res.PeakRSS {
					res.PeakRSS, res.Procs = u.rssBytes, u.procs
				}
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

func (s *sampler) end() { close(s.stop); <-s.done }

// measure runs one round on t: serial calls on one session, then
// cfg.Sessions sessions calling for cfg.Duration.
func measure(ctx context.Context, t *target, res *Result, cfg Config) (Round, error) {
	var r Round
	// The direct stdio target's process belongs to the session.
	var root atomic.Int64
	root.Store(int64(t.pid()))
	rootPID := func() int { return int(root.Load()) }

	s, err := openSession(ctx, t, cfg)
	if err != nil {
		return r, fmt.Errorf("open a session: %w", err)
	}
	if s.proc != nil {
		root.Store(int64(s.proc.Process.Pid))
	}
	sm := sample(rootPID, res)
	for range 20 { // warm up
		if _, err := s.call(ctx); err != nil {
			s.close()
			sm.end()
			return r, err
		}
	}
	u0 := tree(rootPID())
	lat := make([]time.Duration, 0, cfg.SerialCalls)
	for range cfg.SerialCalls {
		d, err := s.call(ctx)
		if err != nil {
			s.close()
			sm.end()
			return r, err
		}
		lat = append(lat, d)
	}
	u1 := tree(rootPID())
	r.SerialCPU = time.Duration((u1.cpuNanos - u0.cpuNanos) / int64(cfg.SerialCalls))
	r.SerialOwnCPU = time.Duration((u1.ownNanos - u0.ownNanos) / int64(cfg.SerialCalls))
	r.SerialP50, r.SerialP99 = percentile(lat, 0.50), percentile(lat, 0.99)

	// Concurrent phase. The direct stdio baseline multiplexes every
	// caller over its one process, as pkg/upstream does.
	sessions := make([]*session, cfg.Sessions)
	for i := range sessions {
		if s.proc != nil {
			sessions[i] = s
			continue
		}
		sessions[i], err = openSession(ctx, t, cfg)
		if err != nil {
			for _, o := range sessions[:i] {
				o.close()
			}
			s.close()
			sm.end()
			return r, fmt.Errorf("open session %d of %d: %w", i+1, cfg.Sessions, err)
		}
		if _, err := sessions[i].call(ctx); err != nil { // warm up
			sm.end()
			return r, err
		}
	}
	u0 = tree(rootPID())
	var (
		mu      sync.Mutex
		all     []time.Duration
		errs    int
		lastErr error
		wg      sync.WaitGroup
	)
	stop := time.Now().Add(cfg.Duration)
	start := time.Now()
	for _, cs := range sessions {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(stop) && ctx.Err() == nil {
				d, err := cs.call(ctx)
				if err != nil {
					mu.Lock()
					errs++
					lastErr = err
					mu.Unlock()
					continue
				}
				mine = append(mine, d)
			}
			mu.Lock()
			all = append(all, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	u1 = tree(rootPID())
	sm.end()
	for _, cs := range sessions {
		if cs != s {
			cs.close()
		}
	}
	s.close()
	if len(all) == 0 {
		return r, errors.Join(errors.New("no concurrent call succeeded"), lastErr)
	}
	r.Ops = float64(len(all)) / elapsed.Seconds()
	r.ConcP50, r.ConcP99 = percentile(all, 0.50), percentile(all, 0.99)
	r.ConcCPU = time.Duration((u1.cpuNanos - u0.cpuNanos) / int64(len(all)))
	r.ConcOwnCPU = time.Duration((u1.ownNanos - u0.ownNanos) / int64(len(all)))
	r.Errors = errs
	return r, ctx.Err()
}
