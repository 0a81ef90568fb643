package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
)

// stdioPool keeps up to Options.StdioPoolSize long-lived processes of one
// stdio server. A process starts on first use, serves many calls (mcp-go's
// stdio client multiplexes requests by id), is replaced when it exits (the
// start waits out an exponential backoff after consecutive failures), and
// is stopped when idle, replaced or closed.
type stdioPool struct {
	id   string
	cfg  ServerConfig
	opts *Options
	log  *slog.Logger
	m    *Manager

	mu        sync.Mutex
	procs     []*proc
	closed    bool
	failures  int       // consecutive start failures and crashes
	notBefore time.Time // no start before this (backoff)
	lastFail  error     // what the last failure was, for error messages
	protocol  string    // protocol version negotiated last time
	info      *ServerInfo
	started   int   // processes started so far
	history   []int // their pids
	wg        sync.WaitGroup
}

func newStdioPool(id string, cfg ServerConfig, opts *Options, log *slog.Logger, m *Manager) *stdioPool {
	return &stdioPool{id: id, cfg: cfg, opts: opts, m: m, log: log.With("server", id, "transport", TransportStdio)}
}

// proc is one server process and its MCP client.
type proc struct {
	pool *stdioPool

	spawned chan struct{} // closed once the spawn attempt is over
	ready   chan struct{} // closed once the process is initialised or failed
	err     error         // why it failed to start (valid after ready)
	exited  chan struct{} // closed when the process has exited and been reaped

	// life ends when the process is being stopped or has exited (and with
	// it the process's subscriptions/listen stream, listen.go).
	life    context.Context
	endLife context.CancelFunc

	// Set before spawned is closed.
	cmd    *exec.Cmd
	pid    int
	stdin  *os.File
	frames *mcpfix.FrameReader
	stderr *stderrSink

	// Set before ready is closed.
	client *client.Client
	relay  *connRelay // routes what the server sends outside responses

	waitErr error // the process's exit status (valid after exited)

	fatalMu sync.Mutex
	fatal   *problem // set when the gateway had to kill it (e.g. result too large)

	// Guarded by pool.mu.
	inflight int
	lastUsed time.Time
	stopping bool
}

func (pr *proc) isExited() bool {
	select {
	case <-pr.exited:
		return true
	default:
		return false
	}
}

func (pr *proc) isReady() bool {
	select {
	case <-pr.ready:
		return pr.err == nil
	default:
		return false
	}
}

func (pr *proc) fatalProblem() *problem {
	pr.fatalMu.Lock()
	defer pr.fatalMu.Unlock()
	return pr.fatal
}

// kill stops the process group at once because of p.
func (pr *proc) kill(p *problem) {
	pr.fatalMu.Lock()
	if pr.fatal == nil {
		pr.fatal = p
	}
	pr.fatalMu.Unlock()
	_ = signalGroup(pr.pid, syscall.SIGKILL)
}

// exitText describes how the process ended, e.g. "exit status 2".
func (pr *proc) exitText() string {
	if pr.waitErr == nil {
		return "exit status 0"
	}
	var ee *exec.ExitError
	if errors.As(pr.waitErr, &ee) {
		return ee.String()
	}
	return pr.waitErr.Error()
}

// stderrNote is "; its last stderr lines: ..." or "".
func (pr *proc) stderrNote() string {
	if pr.stderr == nil {
		return ""
	}
	pr.stderr.wait(200 * time.Millisecond)
	if t := pr.stderr.tail(); t != "" {
		return stderrMarker + quoteTail(t, 600)
	}
	return ""
}

func (p *stdioPool) do(ctx context.Context, op string, idempotent bool, timeout time.Duration, fn callFunc) error {
	for attempt := 0; ; attempt++ {
		pr, err := p.acquire(ctx)
		if err != nil {
			return err
		}
		sctx, st := withCallState(ctx)
		callCtx, cancel := context.WithTimeoutCause(sctx, timeout, errCallTimeout)
		relayCtx, end := pr.relay.begin(callCtx)
		err = fn(relayCtx, pr.client)
		end()
		p.release(pr, err == nil)
		if err == nil {
			cancel()
			return nil
		}
		prob := p.describe(pr, callCtx, ctx, timeout, op, err, st)
		cancel()
		// A list/get/read/ping whose process died before answering is
		// retried once on a fresh process; tools/call never is, since the
		// tool may have run.
		if attempt == 0 && idempotent && st.sendErr != nil && pr.isExited() && pr.fatalProblem() == nil && ctx.Err() == nil {
			p.log.Info("retrying on a new process after the old one exited", "op", op, "exit", pr.exitText())
			continue
		}
		return prob
	}
}

// describe words the failure of a call on pr.
func (p *stdioPool) describe(pr *proc, callCtx, parent context.Context, timeout time.Duration, op string, err error, st *callState) *problem {
	if st.sendErr != nil {
		if f := pr.fatalProblem(); f != nil {
			return f
		}
	}
	if cp := contextProblem(callCtx, parent, timeout, garbageHint(pr.frames)); cp != nil {
		return cp
	}
	if pp := describeAnswer(op, err, st, p.opts.MaxResultBytes); pp != nil {
		return pp
	}
	// The transport failed: almost always because the process ended.
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-pr.exited:
	case <-t.C:
	}
	if f := pr.fatalProblem(); f != nil {
		return f
	}
	if pr.isExited() {
		p.mu.Lock()
		stopping := pr.stopping
		p.mu.Unlock()
		if stopping {
			return newProblem(ErrUnavailable, err, "the gateway stopped the server process during the call (shutdown or configuration change)")
		}
		return newProblem(ErrUnavailable, err, "the server process exited (%s) during the call%s", pr.exitText(), pr.stderrNote())
	}
	return newProblem(ErrUnavailable, err, "lost the connection to the server process: %v", err)
}

// acquire returns a ready process for one call, starting one if the pool
// has room and every process is busy.
func (p *stdioPool) acquire(parent context.Context) (*proc, error) {
	ctx, cancel := context.WithTimeout(parent, p.opts.ConnectTimeout)
	defer cancel()
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil, newProblem(ErrUnavailable, nil, "the server is being stopped (shutdown or configuration change)")
		}
		var best *proc
		for _, pr := range p.procs {
			if pr.stopping || pr.isExited() {
				continue
			}
			if best == nil || pr.inflight < best.inflight {
				best = pr
			}
		}
		if best == nil || (best.inflight > 0 && len(p.procs) < p.opts.StdioPoolSize) {
			if wait := time.Until(p.notBefore); wait > 0 {
				if best == nil {
					fails, last := p.failures, p.lastFail
					p.mu.Unlock()
					if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
						return nil, p.backoffProblem(ctx, fails, wait, last) // no use waiting
					}
					if err := sleepCtx(ctx, wait); err != nil {
						return nil, p.backoffProblem(ctx, fails, wait, last)
					}
					continue
				}
			} else {
				best = p.startLocked()
			}
		}
		best.inflight++
		best.lastUsed = time.Now()
		p.mu.Unlock()

		connect := startConnect(ctx, best.ready)
		select {
		case <-best.ready:
			connect.End()
		case <-ctx.Done():
			connect.End()
			p.release(best, false)
			if parent.Err() == nil {
				return nil, p.startTimeout(best)
			}
			if errors.Is(parent.Err(), context.DeadlineExceeded) {
				return nil, &problem{msg: "did not answer before the caller's deadline (the server process was still starting)", kind: context.DeadlineExceeded, predicate: true}
			}
			return nil, &problem{msg: "was canceled by the caller while the server process was starting", kind: context.Canceled, predicate: true}
		}
		if best.err != nil {
			p.release(best, false)
			return nil, best.err
		}
		return best, nil
	}
}

func (p *stdioPool) backoffProblem(ctx context.Context, fails int, wait time.Duration, last error) *problem {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &problem{msg: "was canceled by the caller while waiting to restart the server", kind: context.Canceled, predicate: true}
	}
	times := "once"
	if fails > 1 {
		times = fmt.Sprintf("%d times in a row", fails)
	}
	return newProblem(ErrUnavailable, last, "the server process failed %s and is restarted in %s (backoff); last failure: %v",
		times, fmtDuration(wait.Round(10*time.Millisecond)), last)
}

func (p *stdioPool) startTimeout(pr *proc) *problem {
	return newProblem(ErrUnavailable, context.DeadlineExceeded,
		"the server process did not finish starting within %s (ConnectTimeout)%s", fmtDuration(p.opts.ConnectTimeout), pr.framesHint())
}

func (pr *proc) framesHint() string {
	select {
	case <-pr.spawned:
	default:
		return ""
	}
	if pr.frames == nil {
		return ""
	}
	return garbageHint(pr.frames)
}

// release ends a call on pr; success resets the failure count.
func (p *stdioPool) release(pr *proc, ok bool) {
	p.mu.Lock()
	pr.inflight--
	pr.lastUsed = time.Now()
	if ok {
		p.failures = 0
	}
	p.mu.Unlock()
}

// startLocked adds a process to the pool and starts it in the background:
// a start is shared by every call that waits for it and is not cut short
// when the call that triggered it gives up. p.mu is held.
func (p *stdioPool) startLocked() *proc {
	pr := &proc{
		pool:    p,
		spawned: make(chan struct{}),
		ready:   make(chan struct{}),
		exited:  make(chan struct{}),
	}
	pr.life, pr.endLife = context.WithCancel(context.Background())
	p.procs = append(p.procs, pr)
	p.started++
	protocol := p.protocol
	p.wg.Go(func() { pr.start(protocol) })
	return pr
}

// start spawns and initialises pr; on failure it records why and leaves
// the pool.
func (pr *proc) start(protocol string) {
	p := pr.pool
	err := pr.spawn()
	close(pr.spawned)
	if err == nil {
		err = pr.initialize(protocol)
	}
	if err != nil {
		var prob *problem
		if !errors.As(err, &prob) {
			prob = newProblem(ErrUnavailable, err, "%v", err)
		}
		pr.err = prob
		pr.endLife()
		if pr.pid > 0 {
			_ = signalGroup(pr.pid, syscall.SIGKILL)
		}
		p.mu.Lock()
		p.remove(pr)
		if !pr.stopping {
			p.failLocked(prob)
		}
		p.mu.Unlock()
		p.log.Warn("upstream server failed to start", "err", prob.msg)
		close(pr.ready)
		return
	}
	close(pr.ready)
}

// failLocked counts a failure and sets the backoff. p.mu is held.
func (p *stdioPool) failLocked(why error) {
	p.failures++
	p.lastFail = why
	p.notBefore = time.Now().Add(p.opts.RestartBackoff.delay(p.failures))
}

// remove drops pr from the pool's list. p.mu is held.
func (p *stdioPool) remove(pr *proc) {
	for i, q := range p.procs {
		if q == pr {
			p.procs = append(p.procs[:i], p.procs[i+1:]...)
			return
		}
	}
}

// spawn starts the process with its own pipes and process group.
func (pr *proc) spawn() error {
	p := pr.pool
	path, err := resolveCommand(p.cfg)
	if err != nil {
		return newProblem(ErrUnavailable, err, "could not start %q: %v", p.cfg.Command, err)
	}
	cmd := &exec.Cmd{
		Path: path,
		Args: append([]string{p.cfg.Command}, p.cfg.Args...),
		Dir:  p.cfg.Cwd,
		Env:  childEnv(p.cfg.Env, p.opts.InheritEnv),
	}
	newProcessGroup(cmd)

	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			f.Close()
		}
	}
	pipe := func() (r, w *os.File, err error) {
		r, w, err = os.Pipe()
		if err == nil {
			files = append(files, r, w)
		}
		return
	}
	inR, inW, err1 := pipe()
	outR, outW, err2 := pipe()
	errR, errW, err3 := pipe()
	if err := errors.Join(err1, err2, err3); err != nil {
		closeAll()
		return newProblem(ErrUnavailable, err, "could not start %q: %v", p.cfg.Command, err)
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = inR, outW, errW
	if err := cmd.Start(); err != nil {
		closeAll()
		where := ""
		if p.cfg.Cwd != "" {
			where = " in " + p.cfg.Cwd
		}
		return newProblem(ErrUnavailable, err, "could not start %q%s: %v", p.cfg.Command, where, err)
	}
	// The child has its copies; the parent keeps only its own ends.
	inR.Close()
	outW.Close()
	errW.Close()

	pr.cmd = cmd
	pr.pid = cmd.Process.Pid
	p.mu.Lock()
	p.history = append(p.history, pr.pid)
	p.mu.Unlock()
	pr.stdin = inW
	log := p.log.With("pid", pr.pid)
	pr.stderr = newStderrSink(log)
	go pr.stderr.run(errR)

	garbageLog := newLogLimiter(5, 0.2)
	pr.frames = newFrameReader(outR, p.opts.MaxResultBytes)
	pr.frames.OnGarbage = func(line string) {
		if ok, held := garbageLog.allow(time.Now()); ok {
			log.Warn("upstream wrote a line to stdout that is not JSON-RPC (dropped)", "line", truncate(line, 200), "suppressed_lines", held)
		}
	}
	pr.frames.TooLarge = func(size, max int64) error {
		prob := tooLarge(size, max)
		log.Warn("stopping upstream process", "reason", prob.msg)
		pr.kill(prob)
		return prob
	}

	go func() {
		pr.waitErr = cmd.Wait()
		// Whatever the leader left behind in its group goes with it, so no
		// grandchild keeps the pipes open or lingers.
		_ = signalGroup(pr.pid, syscall.SIGKILL)
		if !waitGroupGone(pr.pid, 2*time.Second) {
			log.Warn("processes of the upstream's process group outlived it", "pgid", pr.pid)
		}
		pr.endLife()
		close(pr.exited)
		p.exitedProc(pr)
		// mcp-go reads stdout until EOF; give it a moment to take the last
		// frames, then release the pipes in any case.
		time.AfterFunc(2*time.Second, func() {
			outR.Close()
			errR.Close()
		})
	}()
	log.Info("started upstream server process", "command", p.cfg.Command, "args", p.cfg.Args)
	return nil
}

// initialize runs the MCP handshake on a spawned process.
func (pr *proc) initialize(protocol string) error {
	p := pr.pool
	ctx, cancel := context.WithTimeout(context.Background(), p.opts.ConnectTimeout)
	defer cancel()

	wire := &stdioWire{Stdio: transport.NewIO(pr.frames, pr.stdin, nil), limit: p.opts.MaxResultBytes}
	var copts []client.ClientOption
	if protocol != "" && !mcp.IsModernProtocol(protocol) {
		copts = append(copts, client.WithProtocolVersion(protocol)) // skip the discovery probe next time
	}
	relay := newConnRelay(p.m, p.id, p.log.With("pid", pr.pid))
	relay.subs.life = pr.life
	copts = append(copts, relay.clientOptions()...)
	c := client.NewClient(wire, copts...)
	c.OnNotification(relay.notify)
	if err := c.Start(context.Background()); err != nil {
		return newProblem(ErrUnavailable, err, "could not talk to the server process: %v", err)
	}
	sctx, st := withCallState(ctx)
	res, err := c.Initialize(sctx, initializeRequest())
	if err != nil {
		_ = c.Close()
		return pr.initProblem(ctx, err, st)
	}
	relay.stateless = mcpfix.NewStatelessCaller(wire, c.ProtocolVersion(), initializeRequest().Params.ClientInfo, statelessCaps())
	pr.client = c
	pr.relay = relay
	info := serverInfo(res, c)
	p.mu.Lock()
	p.protocol = c.ProtocolVersion()
	p.info = &info
	p.mu.Unlock()
	return nil
}

func (pr *proc) initProblem(ctx context.Context, err error, st *callState) *problem {
	p := pr.pool
	if f := pr.fatalProblem(); f != nil {
		return f
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	if st.sendErr != nil || ctx.Err() != nil {
		select {
		case <-pr.exited:
		case <-t.C:
		}
	}
	if pr.isExited() {
		return newProblem(ErrUnavailable, err, "the server process exited (%s) before it finished initialize%s", pr.exitText(), pr.stderrNote())
	}
	if ctx.Err() != nil {
		return newProblem(ErrUnavailable, context.DeadlineExceeded, "the server process did not answer initialize within %s (ConnectTimeout)%s%s",
			fmtDuration(p.opts.ConnectTimeout), garbageHint(pr.frames), pr.stderrNote())
	}
	if pp := describeAnswer("initialize", err, st, p.opts.MaxResultBytes); pp != nil {
		return duringInitialize(pp)
	}
	return newProblem(ErrUnavailable, err, "initialize failed: %v%s", err, pr.stderrNote())
}

// exitedProc takes a process that ended out of the pool; an exit the
// gateway did not ask for counts as a failure for the backoff.
func (p *stdioPool) exitedProc(pr *proc) {
	p.mu.Lock()
	p.remove(pr)
	unexpected := !pr.stopping && pr.isReady()
	if unexpected {
		why := pr.fatalProblem()
		var err error = why
		if why == nil {
			err = fmt.Errorf("the process exited (%s)", pr.exitText())
		}
		p.failLocked(err)
	}
	p.mu.Unlock()
	if unexpected {
		p.log.Warn("upstream server process exited", "pid", pr.pid, "exit", pr.exitText(), "stderr", pr.stderr.tail())
	}
}

// stop ends pr: close its stdin (a well-behaved server exits), then SIGTERM
// the group, then SIGKILL it, and reap.
func (pr *proc) stop() {
	pr.endLife()
	<-pr.spawned
	if pr.cmd == nil {
		return
	}
	pr.stdin.Close()
	steps := []struct {
		wait time.Duration
		sig  syscall.Signal
	}{{time.Second, syscall.SIGTERM}, {time.Second, syscall.SIGKILL}, {5 * time.Second, 0}}
	for _, s := range steps {
		t := time.NewTimer(s.wait)
		select {
		case <-pr.exited:
			t.Stop()
			return
		case <-t.C:
		}
		if s.sig != 0 {
			_ = signalGroup(pr.pid, s.sig)
		}
	}
	pr.pool.log.Error("upstream server process did not exit after SIGKILL", "pid", pr.pid)
}

// reap stops the processes idle for IdleTimeout.
func (p *stdioPool) reap(now time.Time) {
	if p.opts.IdleTimeout < 0 {
		return
	}
	var idle []*proc
	p.mu.Lock()
	for _, pr := range p.procs {
		if pr.isReady() && pr.inflight == 0 && !pr.stopping && now.Sub(pr.lastUsed) >= p.opts.IdleTimeout {
			pr.stopping = true
			idle = append(idle, pr)
		}
	}
	for _, pr := range idle {
		p.remove(pr)
	}
	p.mu.Unlock()
	for _, pr := range idle {
		p.log.Info("stopping idle upstream server process", "pid", pr.pid)
		p.wg.Go(pr.stop)
	}
}

// stop ends every process and waits for them.
func (p *stdioPool) stop() {
	p.mu.Lock()
	p.closed = true
	procs := append([]*proc(nil), p.procs...)
	for _, pr := range procs {
		pr.stopping = true
	}
	p.procs = nil
	p.mu.Unlock()
	for _, pr := range procs {
		p.wg.Go(pr.stop)
	}
	p.wg.Wait()
}

func (p *stdioPool) serverInfo() (ServerInfo, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.info == nil {
		return ServerInfo{}, false
	}
	return *p.info, true
}

// sleepCtx waits d or until ctx ends.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// childEnv is PATH, HOME and the inherited names from the gateway's
// environment, then the server's own variables on top.
func childEnv(own map[string]string, inherit []string) []string {
	var env []string
	seen := map[string]bool{}
	for _, name := range append([]string{"PATH", "HOME"}, inherit...) {
		if seen[name] {
			continue
		}
		seen[name] = true
		if _, overridden := own[name]; overridden {
			continue
		}
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	keys := make([]string, 0, len(own))
	for k := range own {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+own[k])
	}
	return env
}

// resolveCommand finds the executable: a bare name in the PATH the child
// will get (the server's own PATH if it sets one), a relative path from Cwd.
func resolveCommand(cfg ServerConfig) (string, error) {
	name := cfg.Command
	if strings.ContainsRune(name, filepath.Separator) || strings.ContainsRune(name, '/') {
		return name, nil // relative paths are taken from Cwd by os/exec
	}
	path, custom := cfg.Env["PATH"]
	if !custom {
		p, err := exec.LookPath(name)
		if err != nil {
			return "", fmt.Errorf("%q is not an executable in PATH", name)
		}
		return p, nil
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			continue
		}
		cand := filepath.Join(dir, name)
		if fi, err := os.Stat(cand); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return cand, nil
		}
	}
	return "", fmt.Errorf("%q is not an executable in the server's PATH %q", name, path)
}
