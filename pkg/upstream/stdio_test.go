package upstream

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

func resultText(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	var parts []string
	for _, c := range res.Content {
		tc, ok := c.(mcp.TextContent)
		if !ok {
			t.Fatalf("content %T is not text", c)
		}
		parts = append(parts, tc.Text)
	}
	return strings.Join(parts, "\n")
}

func TestStdioEchoServer(t *testing.T) {
	m, logs := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	ctx := ctxT(t, 30*time.Second)

	info, err := m.Info(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	if info.Name != "echo" || info.Version != "1.0.0" || !strings.Contains(info.Instructions, "Reference server") || info.Capabilities.Tools == nil {
		t.Errorf("Info = %+v", info)
	}
	if err := m.Ping(ctx, "echo"); err != nil {
		t.Errorf("Ping: %v", err)
	}

	tools, err := m.ListTools(ctx, "echo")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	if want := []string{"add", "echo", "fail", "reverse", "sleep"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v, want %v", names, want)
	}

	calls := []struct {
		name    string
		args    map[string]any
		want    string
		isError bool
	}{
		{"echo", map[string]any{"text": "héllo wörld"}, "héllo wörld", false},
		{"add", map[string]any{"a": 2, "b": 3.5}, "5.5", false},
		{"reverse", map[string]any{"text": "abc→d"}, "d→cba", false},
		{"sleep", map[string]any{"ms": 1}, "slept 1 ms", false},
		{"fail", map[string]any{"message": "no luck"}, "no luck", true},
		{"echo", nil, "required argument \"text\" not found", true},
	}
	for _, c := range calls {
		res, err := m.CallTool(ctx, "echo", c.name, c.args)
		if err != nil {
			t.Errorf("CallTool(%s): %v", c.name, err)
			continue
		}
		if got := resultText(t, res); got != c.want || res.IsError != c.isError {
			t.Errorf("CallTool(%s) = %q (isError %v), want %q (isError %v)", c.name, got, res.IsError, c.want, c.isError)
		}
	}

	prompts, err := m.ListPrompts(ctx, "echo")
	if err != nil || len(prompts) != 1 || prompts[0].Name != "greeting" {
		t.Errorf("ListPrompts = %+v, %v", prompts, err)
	}
	pr, err := m.GetPrompt(ctx, "echo", "greeting", map[string]string{"name": "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := pr.Messages[0].Content.(mcp.TextContent); !ok || tc.Text != "Say hello to Ada." {
		t.Errorf("GetPrompt = %+v", pr.Messages)
	}

	res, err := m.ListResources(ctx, "echo")
	if err != nil || len(res) != 1 || res[0].URI != "echo://info" {
		t.Errorf("ListResources = %+v, %v", res, err)
	}
	tmpl, err := m.ListResourceTemplates(ctx, "echo")
	if err != nil || len(tmpl) != 1 || tmpl[0].URITemplate == nil || tmpl[0].URITemplate.Raw() != "echo://items/{id}" {
		t.Errorf("ListResourceTemplates = %+v, %v", tmpl, err)
	}
	for uri, want := range map[string]string{"echo://info": "echo 1.0.0: reference MCP server of the gateway", "echo://items/42": "item 42"} {
		rr, err := m.ReadResource(ctx, "echo", uri)
		if err != nil {
			t.Errorf("ReadResource(%s): %v", uri, err)
			continue
		}
		if tc, ok := rr.Contents[0].(mcp.TextResourceContents); !ok || tc.Text != want {
			t.Errorf("ReadResource(%s) = %+v, want %q", uri, rr.Contents, want)
		}
	}

	// Errors the server answers with are worded and keep their JSON-RPC kind.
	_, err = m.GetPrompt(ctx, "echo", "nope", nil)
	var ue *Error
	if !errors.As(err, &ue) || ue.Server != "echo" || ue.Op != "prompts/get" || !strings.Contains(err.Error(), "the server answered with error") {
		t.Errorf("GetPrompt(nope) error = %v", err)
	}

	// The child's stderr goes to the logger.
	if !strings.Contains(logs.String(), `msg="upstream stderr" server=echo transport=stdio`) || !strings.Contains(logs.String(), "serving MCP on stdio") {
		t.Errorf("stderr not logged:\n%s", logs)
	}

	// One process served all of it.
	if n := m.pool(t, "echo").startedCount(); n != 1 {
		t.Errorf("started %d processes, want 1", n)
	}
}

func TestStdioConcurrentCallsSharePool(t *testing.T) {
	m, _ := newTestManager(t, Options{StdioPoolSize: 2})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	ctx := ctxT(t, 60*time.Second)

	const n = 50
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if i%5 == 0 { // some slow calls keep both processes busy
				if _, err := m.CallTool(ctx, "echo", "sleep", map[string]any{"ms": 20}); err != nil {
					errs <- err
				}
				return
			}
			text := fmt.Sprintf("call-%d", i)
			res, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": text})
			if err != nil {
				errs <- err
				return
			}
			if got := resultText(t, res); got != text {
				errs <- fmt.Errorf("call %d got %q", i, got)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	p := m.pool(t, "echo")
	if got := p.startedCount(); got != 2 {
		t.Errorf("started %d processes for %d concurrent calls, want the pool size 2", got, n)
	}
	if live := p.livePIDs(); len(live) != 2 {
		t.Errorf("live processes %v, want 2 reused ones", live)
	}
}

// TestStdioCancelledCallFreesTheProcess: a caller that gives up on a long
// call gets context.Canceled at once, and the pool's only process serves
// the next call right away instead of after the abandoned one. (That the
// upstream is told, with notifications/cancelled, is tested through the
// gateway in pkg/gateway's TestCancellationReachesUpstream.)
func TestStdioCancelledCallFreesTheProcess(t *testing.T) {
	m, _ := newTestManager(t, Options{StdioPoolSize: 1})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	if _, err := m.CallTool(ctxT(t, 30*time.Second), "echo", "echo", map[string]any{"text": "warm"}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "echo", "sleep", map[string]any{"ms": 600000})
		done <- err
	}()
	time.Sleep(200 * time.Millisecond) // the call is in flight
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v, want context.Canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled call did not return")
	}
	// The next call has 20 s: far less than the abandoned sleep (10 min).
	res, err := m.CallTool(ctxT(t, 20*time.Second), "echo", "echo", map[string]any{"text": "next"})
	if err != nil || resultText(t, res) != "next" {
		t.Fatalf("call after a cancelled one: %v", err)
	}
	if got := m.pool(t, "echo").startedCount(); got != 1 {
		t.Errorf("started %d processes, want the one process reused", got)
	}
}

func TestStdioProcessKilledMidCall(t *testing.T) {
	m, _ := newTestManager(t, Options{StdioPoolSize: 1, RestartBackoff: Backoff{Min: 10 * time.Millisecond}})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	ctx := ctxT(t, 30*time.Second)
	if err := m.Ping(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	p := m.pool(t, "echo")
	pid := p.livePIDs()[0]

	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "echo", "sleep", map[string]any{"ms": 10000})
		done <- err
	}()
	testenv.Eventually(t, 5*time.Second, "the call to be in flight", func() bool {
		p.mu.Lock()
		defer p.mu.Unlock()
		return len(p.procs) == 1 && p.procs[0].inflight == 1
	})
	time.Sleep(50 * time.Millisecond) // let the request reach the server
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the call did not fail after its process was killed")
	}
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `upstream "echo": tools/call failed: the server process exited (signal: killed) during the call`) {
		t.Fatalf("error = %v", err)
	}
	if !strings.Contains(err.Error(), "serving MCP on stdio") {
		t.Errorf("error lacks the stderr tail: %v", err)
	}

	res, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": "again"})
	if err != nil || resultText(t, res) != "again" {
		t.Fatalf("the next call = %v, %v", res, err)
	}
	if n := p.startedCount(); n != 2 {
		t.Errorf("started %d processes, want 2 (one replacement)", n)
	}
	if processExists(pid) {
		t.Errorf("killed process %d was not reaped", pid)
	}
}

func TestStdioFaults(t *testing.T) {
	m, _ := newTestManager(t, Options{
		CallTimeout:    400 * time.Millisecond,
		MaxResultBytes: 64 << 10,
		RestartBackoff: Backoff{Min: 10 * time.Millisecond, Max: 20 * time.Millisecond},
	})
	m.SetServers(map[string]ServerConfig{
		"ok":       echoConfig(),
		"hang":     echoConfig("-misbehave=hang"),
		"garbage":  echoConfig("-misbehave=garbage"),
		"badframe": echoConfig("-misbehave=badframe"),
		"huge":     echoConfig("-misbehave=huge", "-huge-bytes=1048576"),
		"crash":    echoConfig("-misbehave=crash-on-call"),
	})
	ctx := ctxT(t, 60*time.Second)
	// Start every process first, so the call timeout below is all the server's.
	for _, id := range m.Servers() {
		if err := m.Ping(ctx, id); err != nil {
			t.Fatalf("Ping(%s): %v", id, err)
		}
	}

	cases := []struct {
		id     string
		kind   error
		substr []string
	}{
		{"hang", context.DeadlineExceeded, []string{`upstream "hang": tools/call did not answer within 400ms`}},
		{"garbage", context.DeadlineExceeded, []string{`did not answer within 400ms (the server wrote 4 lines to stdout that are not JSON-RPC, last: "[1,2,3]"`}},
		{"badframe", ErrInvalidResponse, []string{`tools/call failed: the server sent an invalid JSON-RPC response: the response has neither result nor error`}},
		{"huge", ErrResultTooLarge, []string{`tools/call failed: the server's response of 1 MiB is larger than the 64 KiB limit`}},
		{"crash", ErrUnavailable, []string{`the server process exited (exit status 3) during the call`, `crashing on tools/call as asked`}},
	}
	var wg sync.WaitGroup
	for _, c := range cases {
		wg.Add(1)
		go func() { // all at once: one server's trouble must not hold up another
			defer wg.Done()
			_, err := m.CallTool(ctx, c.id, "echo", map[string]any{"text": "x"})
			if err == nil {
				t.Errorf("%s: no error", c.id)
				return
			}
			var ue *Error
			if !errors.As(err, &ue) || ue.Server != c.id {
				t.Errorf("%s: error %T %v is not an *Error for the server", c.id, err, err)
			}
			if !errors.Is(err, c.kind) {
				t.Errorf("%s: error %q is not %v", c.id, err, c.kind)
			}
			for _, s := range c.substr {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%s: error %q lacks %q", c.id, err, s)
				}
			}
		}()
	}
	// The healthy server keeps answering meanwhile.
	for i := 0; i < 5; i++ {
		res, err := m.CallTool(ctx, "ok", "echo", map[string]any{"text": "fine"})
		if err != nil || resultText(t, res) != "fine" {
			t.Errorf("healthy server: %v, %v", res, err)
		}
	}
	wg.Wait()

	// The process that sent the oversized result is still the same one (only
	// that call failed); list methods on the faulty servers still work.
	for _, id := range []string{"huge", "hang", "garbage", "badframe"} {
		if _, err := m.ListTools(ctx, id); err != nil {
			t.Errorf("ListTools(%s) after the fault: %v", id, err)
		}
		if n := m.pool(t, id).startedCount(); n != 1 {
			t.Errorf("%s: started %d processes, want 1", id, n)
		}
	}
}

func TestStdioStartFailures(t *testing.T) {
	m, _ := newTestManager(t, Options{RestartBackoff: Backoff{Min: time.Hour}})
	m.SetServers(map[string]ServerConfig{
		"exits":   echoConfig("-misbehave=exit-at-start"),
		"missing": {Transport: TransportStdio, Command: "no-such-command-for-upstream-test"},
		"badcwd":  {Transport: TransportStdio, Command: echoBin, Cwd: filepath.Join(t.TempDir(), "gone")},
		"invalid": {Transport: "carrier-pigeon"},
	})
	ctx := ctxT(t, 30*time.Second)
	cases := []struct {
		id     string
		substr string
	}{
		{"exits", `upstream "exits": tools/list failed: the server process exited (exit status 2) before it finished initialize; its last stderr lines: "echo: cannot start: ECHO_REQUIRED_SETTING is not set`},
		{"missing", `upstream "missing": tools/list failed: could not start "no-such-command-for-upstream-test": "no-such-command-for-upstream-test" is not an executable in PATH`},
		{"badcwd", `could not start "` + echoBin + `" in `},
		{"invalid", `upstream "invalid": tools/list failed: the server is misconfigured: unknown transport "carrier-pigeon"`},
	}
	for _, c := range cases {
		_, err := m.ListTools(ctx, c.id)
		if !errors.Is(err, ErrUnavailable) || !strings.Contains(fmt.Sprint(err), c.substr) {
			t.Errorf("%s: error = %v\nwant it to contain %s", c.id, err, c.substr)
		}
	}
	// The next attempt waits out the backoff; a caller with less patience
	// is told why right away.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err := m.ListTools(short, "exits")
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(fmt.Sprint(err), "the server process failed once and is restarted in") ||
		!strings.Contains(fmt.Sprint(err), "ECHO_REQUIRED_SETTING") {
		t.Errorf("during backoff: %v", err)
	}
	if n := m.pool(t, "exits").startedCount(); n != 1 {
		t.Errorf("started %d times during the backoff, want 1", n)
	}
	_, err = m.ListTools(ctx, "nobody")
	if !errors.Is(err, ErrUnknownServer) || err.Error() != `upstream "nobody": tools/list failed: no upstream server with this id is configured` {
		t.Errorf("unknown server: %v", err)
	}
}

func TestStdioIdleShutdown(t *testing.T) {
	m, _ := newTestManager(t, Options{IdleTimeout: 150 * time.Millisecond})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	ctx := ctxT(t, 30*time.Second)
	if err := m.Ping(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	p := m.pool(t, "echo")
	pid := p.livePIDs()[0]
	testenv.Eventually(t, 5*time.Second, "the idle process to stop", func() bool { return !processExists(pid) })
	if live := p.livePIDs(); len(live) != 0 {
		t.Errorf("processes %v still in the pool", live)
	}
	if _, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": "x"}); err != nil {
		t.Fatal(err)
	}
	if n := p.startedCount(); n != 2 {
		t.Errorf("started %d, want 2", n)
	}
	// A process busy with a call longer than the idle timeout is not stopped.
	if _, err := m.CallTool(ctx, "echo", "sleep", map[string]any{"ms": 400}); err != nil {
		t.Errorf("long call on an otherwise idle pool: %v", err)
	}
}

func TestStdioCloseKillsProcessGroup(t *testing.T) {
	// sh runs the server as its child and leaves a sleep behind: stopping sh
	// alone would orphan both.
	dir := t.TempDir()
	t.Setenv("UPSTREAM_TEST_SECRET", "must-not-leak")
	m := NewManager(Options{StdioPoolSize: 2, InheritEnv: []string{"LANG_NOT_SET_ANYWHERE"}})
	m.SetServers(map[string]ServerConfig{"wrapped": {
		Transport: TransportStdio, Command: "sh",
		Args: []string{"-c", fmt.Sprintf("env > env.txt; sleep 300 & %q; true", echoBin)},
		Cwd:  dir,
		Env:  map[string]string{"SERVER_OWN": "yes"},
	}})
	ctx := ctxT(t, 30*time.Second)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := m.CallTool(ctx, "wrapped", "sleep", map[string]any{"ms": 100}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	pids := m.startedPIDs()
	if len(pids) != 2 {
		t.Fatalf("started %v, want 2 processes", pids)
	}
	for _, pid := range pids {
		if n := len(groupMembers(pid)); n != 3 {
			t.Errorf("group %d has %d processes, want sh, sleep and the server", pid, n)
		}
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	for _, pid := range pids {
		if alive := groupMembers(pid); len(alive) > 0 {
			t.Errorf("after Close, group %d still has %v", pid, alive)
		}
	}
	_, err := m.CallTool(ctx, "wrapped", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, ErrUnavailable) {
		t.Errorf("call after Close: %v", err)
	}

	env, err := os.ReadFile(filepath.Join(dir, "env.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"PATH=", "HOME=", "SERVER_OWN=yes"} {
		if !strings.Contains(string(env), want) {
			t.Errorf("child env lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(string(env), "UPSTREAM_TEST_SECRET") {
		t.Errorf("the gateway's environment leaked to the child:\n%s", env)
	}
}

func TestSetServersWhileCallsRun(t *testing.T) {
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"a": echoConfig(), "b": echoConfig()})
	ctx := ctxT(t, 30*time.Second)
	if err := m.Ping(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	oldPID := m.pool(t, "a").livePIDs()[0]

	done := make(chan error, 1)
	go func() {
		res, err := m.CallTool(ctx, "a", "sleep", map[string]any{"ms": 300})
		if err == nil && resultText(t, res) != "slept 300 ms" {
			err = fmt.Errorf("got %q", resultText(t, res))
		}
		done <- err
	}()
	time.Sleep(100 * time.Millisecond)

	// Change a (different env), drop b, add c; the same config for a again
	// later must not restart anything.
	changed := echoConfig()
	changed.Env = map[string]string{"X": "1"}
	m.SetServers(map[string]ServerConfig{"a": changed, "c": echoConfig()})
	if got := m.Servers(); !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("Servers() = %v", got)
	}
	if err := <-done; err != nil {
		t.Errorf("the call running during the change failed: %v", err)
	}
	res, err := m.CallTool(ctx, "a", "echo", map[string]any{"text": "new"})
	if err != nil || resultText(t, res) != "new" {
		t.Fatalf("call after the change: %v, %v", res, err)
	}
	newPID := m.pool(t, "a").livePIDs()[0]
	if newPID == oldPID {
		t.Errorf("the changed server still runs the old process")
	}
	testenv.Eventually(t, 5*time.Second, "the replaced process to stop", func() bool { return !processExists(oldPID) })

	m.SetServers(map[string]ServerConfig{"a": changed, "c": echoConfig()})
	if got := m.pool(t, "a").livePIDs(); !slices.Equal(got, []int{newPID}) {
		t.Errorf("an unchanged config restarted the server: %v", got)
	}
	if _, err := m.ListTools(ctx, "b"); !errors.Is(err, ErrUnknownServer) {
		t.Errorf("removed server: %v", err)
	}
}

func TestCallSlots(t *testing.T) {
	m, _ := newTestManager(t, Options{MaxConcurrentPerServer: 1})
	m.SetServers(map[string]ServerConfig{"echo": echoConfig()})
	ctx := ctxT(t, 30*time.Second)
	if err := m.Ping(ctx, "echo"); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := m.CallTool(ctx, "echo", "sleep", map[string]any{"ms": 500})
		done <- err
	}()
	m.mu.RLock()
	srv := m.servers["echo"]
	m.mu.RUnlock()
	testenv.Eventually(t, 5*time.Second, "the first call to hold the only slot", func() bool { return len(srv.slots) == 1 })
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := m.CallTool(short, "echo", "echo", map[string]any{"text": "x"})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(fmt.Sprint(err), "waiting for a free call slot") {
		t.Errorf("second call = %v", err)
	}
	if err := <-done; err != nil {
		t.Error(err)
	}
	if _, err := m.CallTool(ctx, "echo", "echo", map[string]any{"text": "x"}); err != nil {
		t.Errorf("after the slot freed: %v", err)
	}
}
