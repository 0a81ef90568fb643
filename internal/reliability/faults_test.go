package reliability

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

const faultKeys = `keys:
  - id: admin
    secret: "s-fault-admin"
    admin: true
    servers: {echo: {}, other: {}, crash: {}, hang: {}, garbage: {}, badframe: {}, huge: {}, web: {}, web2: {}, victim: {}, churn: {}}
`

// faultGateway fronts healthy upstreams (echo, other), one of each fault
// mode of servers/echo, an HTTP upstream (web) and two healthy servers the
// tests kill (victim, churn; told apart by a harmless marker argument).
func faultGateway(t *testing.T) (g *gateway, webMarker, web2Marker string) {
	t.Helper()
	// The HTTP upstreams pick their own ports; a harmless argument tells
	// their processes apart for the tests that kill them.
	webMarker, web2Marker = "-huge-bytes=4444", "-huge-bytes=4545"
	webURL, _ := testenv.StartEchoAt(t, "127.0.0.1:0", webMarker)
	web2URL, _ := testenv.StartEchoAt(t, "127.0.0.1:0", web2Marker)
	reg := "servers:\n" +
		stdioEntry(t, "echo", "") +
		stdioEntry(t, "other", "") +
		stdioEntry(t, "crash", "", "-misbehave=crash-on-call") +
		stdioEntry(t, "hang", "", "-misbehave=hang") +
		stdioEntry(t, "garbage", "", "-misbehave=garbage") +
		stdioEntry(t, "badframe", "", "-misbehave=badframe") +
		stdioEntry(t, "huge", "", "-misbehave=huge", "-huge-bytes=200000") +
		stdioEntry(t, "victim", "", "-huge-bytes=4242") +
		stdioEntry(t, "churn", "", "-huge-bytes=4343") +
		fmt.Sprintf("  web:\n    transport: streamable_http\n    url: %s\n", webURL) +
		fmt.Sprintf("  web2:\n    transport: streamable_http\n    url: %s\n", web2URL)
	return startGateway(t, gwOpts{Registry: reg, Keys: faultKeys, Env: map[string]string{
		"MCP_GATEWAY_MAX_RESULT_BYTES": "65536",
		// Results over the limit are refused, not stored: the upstream's
		// frame limit is what these faults exercise.
		"MCP_GATEWAY_MAX_SPILL_BYTES":  "0",
		"MCP_GATEWAY_UPSTREAM_TIMEOUT": "2",
		"MCP_GATEWAY_STDIO_POOL_SIZE":  "2",
	}}), webMarker, web2Marker
}

// healthyLoad calls the healthy upstreams n times from workers goroutines
// while a fault happens, and reports every failure.
func healthyLoad(t *testing.T, c *client.Client, workers, n int) (wait func()) {
	var wg sync.WaitGroup
	var failures atomic.Int64
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < n; i++ {
				word := fmt.Sprintf("w%di%d", w, i)
				name, want := "echo__echo", word
				if (w+i)%2 == 1 {
					name, want = "other__reverse", reverse(word)
				}
				res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": name, "arguments": map[string]any{"text": word}})
				if err != nil || res.IsError || testenv.Text(res) != want {
					failures.Add(1)
					t.Errorf("healthy upstream call %s(%q) during a fault: err=%v result=%q", name, word, err, testenv.Text(res))
				}
			}
		}(w)
	}
	return func() {
		wg.Wait()
		if failures.Load() > 0 {
			t.Errorf("%d healthy calls failed", failures.Load())
		}
	}
}

func reverse(s string) string {
	r := []rune(s)
	for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
		r[i], r[j] = r[j], r[i]
	}
	return string(r)
}

func TestUpstreamFaults(t *testing.T) {
	g, webMarker, web2Marker := faultGateway(t)
	c := connect(t, g.url, "s-fault-admin", false, nil)

	cases := []struct {
		name       string
		call       string         // tool to call (through run_tool)
		args       map[string]any // its arguments
		killBefore []string       // kill the processes whose command line has these markers before the call
		killDuring []string       // ... or once the call is in flight
		want       []string       // the error names the upstream and the problem ("a|b": either)
		within     time.Duration  // the client's deadline: the gateway must answer first
	}{
		{name: "crash on call", call: "crash__echo", args: map[string]any{"text": "x"},
			want: []string{`upstream "crash"`, "server process exited (exit status 3) during the call", "its stderr is in the gateway's log"}, within: 20 * time.Second},
		{name: "hang past the timeout", call: "hang__echo", args: map[string]any{"text": "x"},
			want: []string{`upstream "hang"`, "did not answer within 2s"}, within: 20 * time.Second},
		{name: "garbage on stdout", call: "garbage__echo", args: map[string]any{"text": "x"},
			want: []string{`upstream "garbage"`, "did not answer within 2s", "not JSON-RPC"}, within: 20 * time.Second},
		{name: "invalid JSON-RPC frame", call: "badframe__echo", args: map[string]any{"text": "x"},
			want: []string{`upstream "badframe"`, "invalid JSON-RPC response", "neither result nor error"}, within: 20 * time.Second},
		{name: "huge result", call: "huge__echo", args: map[string]any{"text": "x"},
			want: []string{`upstream "huge"`, "larger than the 64 KiB limit"}, within: 20 * time.Second},
		{name: "stdio process killed mid-call", call: "victim__sleep", args: map[string]any{"ms": 60000},
			killDuring: []string{"-huge-bytes=4242"},
			want:       []string{`upstream "victim"`, "server process exited", "during the call"}, within: 30 * time.Second},
		{name: "HTTP upstream gone", call: "web__echo", args: map[string]any{"text": "x"},
			killBefore: []string{"-http", webMarker},
			want:       []string{`upstream "web"`, "could not reach|could not connect"}, within: 30 * time.Second},
		{name: "HTTP upstream killed mid-call", call: "web2__sleep", args: map[string]any{"ms": 60000},
			killDuring: []string{"-http", web2Marker},
			want:       []string{`upstream "web2"`}, within: 30 * time.Second},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			done := healthyLoad(t, c, 4, 6)
			if tc.killBefore != nil {
				pids := childPIDs(t, tc.killBefore...)
				if len(pids) == 0 {
					t.Fatalf("no process with %v to kill", tc.killBefore)
				}
				for _, p := range pids {
					kill(p)
				}
			}
			type answer struct {
				text    string
				isError bool
				err     error
			}
			ch := make(chan answer, 1)
			go func() {
				res, err := testenv.CallTool(c, tc.within, "run_tool", map[string]any{"call_name": tc.call, "arguments": tc.args})
				ch <- answer{testenv.Text(res), res != nil && res.IsError, err}
			}()
			if tc.killDuring != nil {
				killWhenBusy(t, tc.killDuring, ch)
			}
			a := <-ch
			done()
			if a.err != nil {
				t.Fatalf("the gateway did not answer within %s: %v", tc.within, a.err)
			}
			if !a.isError {
				t.Fatalf("faulty upstream call succeeded: %q", a.text)
			}
			t.Logf("error: %s", a.text)
			for _, w := range tc.want {
				found := false
				for _, alt := range strings.Split(w, "|") {
					found = found || strings.Contains(a.text, alt)
				}
				if !found {
					t.Errorf("error %q does not say %q", a.text, w)
				}
			}
		})
	}
}

// killWhenBusy kills the processes matching markers once the call has had
// time to reach them (the pool starts a process on demand, so it waits for
// one to appear), unless the call already answered.
func killWhenBusy[T any](t *testing.T, markers []string, answered chan T) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		if len(answered) > 0 {
			return
		}
		if pids := childPIDs(t, markers...); len(pids) > 0 {
			// The call is written to the process right after it is
			// acquired; give it a moment to be in flight.
			time.Sleep(300 * time.Millisecond)
			for _, p := range childPIDs(t, markers...) {
				kill(p)
			}
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no process with %v appeared", markers)
}

// TestRunToolsIsolatesFailures sends one batch mixing healthy and faulty
// upstreams: every call gets its own result, the healthy ones succeed.
func TestRunToolsIsolatesFailures(t *testing.T) {
	g, _, _ := faultGateway(t)
	c := connect(t, g.url, "s-fault-admin", false, nil)
	calls := []any{
		map[string]any{"id": "ok1", "call_name": "echo__echo", "arguments": map[string]any{"text": "one"}},
		map[string]any{"id": "crash", "call_name": "crash__echo", "arguments": map[string]any{"text": "x"}},
		map[string]any{"id": "hang", "call_name": "hang__echo", "arguments": map[string]any{"text": "x"}},
		map[string]any{"id": "garbage", "call_name": "garbage__echo", "arguments": map[string]any{"text": "x"}},
		map[string]any{"id": "badframe", "call_name": "badframe__echo", "arguments": map[string]any{"text": "x"}},
		map[string]any{"id": "huge", "call_name": "huge__echo", "arguments": map[string]any{"text": "x"}},
		map[string]any{"id": "missing", "call_name": "nosuch__echo", "arguments": map[string]any{"text": "x"}},
		map[string]any{"id": "badargs", "call_name": "echo__add", "arguments": map[string]any{"a": "two"}},
		map[string]any{"id": "ok2", "call_name": "other__reverse", "arguments": map[string]any{"text": "abc"}},
		map[string]any{"id": "ok3", "call_name": "web__add", "arguments": map[string]any{"a": 2, "b": 3}},
	}
	res, err := testenv.CallTool(c, 30*time.Second, "run_tools", map[string]any{"calls": calls})
	if err != nil || res.IsError {
		t.Fatalf("run_tools: %v %q", err, testenv.Text(res))
	}
	b := parseBatch(t, res)
	want := map[string]string{ // id → "" for success with that text prefix "=..." or the error substring
		"ok1":      "=one",
		"crash":    "server process exited",
		"hang":     "did not answer within 2s",
		"garbage":  "not JSON-RPC",
		"badframe": "invalid JSON-RPC response",
		"huge":     "larger than the 64 KiB limit",
		"missing":  `tool "nosuch__echo" not found`,
		"badargs":  "invalid arguments for echo__add",
		"ok2":      "=cba",
		"ok3":      "=5",
	}
	if len(b.Results) != len(calls) || b.Succeeded != 3 || b.Failed != 7 {
		t.Fatalf("run_tools: %d results, %d succeeded, %d failed: %+v", len(b.Results), b.Succeeded, b.Failed, b)
	}
	for i, r := range b.Results {
		id := calls[i].(map[string]any)["id"].(string)
		if r.ID != id {
			t.Errorf("result %d has id %q, want %q (results keep the order of the calls)", i, r.ID, id)
		}
		w := want[id]
		if out, ok := strings.CutPrefix(w, "="); ok {
			if !r.OK || r.Result == nil || len(r.Result.Content) == 0 || r.Result.Content[0].Text != out {
				t.Errorf("%s: %+v, want success %q", id, r, out)
			}
			continue
		}
		if r.OK || !strings.Contains(r.Error, w) {
			t.Errorf("%s: ok=%v error %q, want an error saying %q", id, r.OK, r.Error, w)
		}
	}
}

// TestRestartUnderLoad kills a stdio upstream's processes repeatedly while
// calls to it and to another upstream run: calls to the other upstream all
// succeed, calls to the killed one either succeed or fail with an error
// naming it, and it serves again afterwards from new processes.
func TestRestartUnderLoad(t *testing.T) {
	g, _, _ := faultGateway(t)
	c := connect(t, g.url, "s-fault-admin", false, nil)
	const marker = "-huge-bytes=4343"
	if res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "churn__echo", "arguments": map[string]any{"text": "warm"}}); err != nil || res.IsError {
		t.Fatalf("warm-up: %v %q", err, testenv.Text(res))
	}
	first := childPIDs(t, marker)
	if len(first) == 0 {
		t.Fatal("churn process not found")
	}

	var ok, failed, otherFailed atomic.Int64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := 0; w < 6; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 400; i++ { // bounded by count and by stop
				select {
				case <-stop:
					return
				default:
				}
				word := fmt.Sprintf("w%d-%d", w, i)
				res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "churn__sleep", "arguments": map[string]any{"ms": 5}})
				switch {
				case err != nil:
					failed.Add(1)
					t.Errorf("churn call: protocol error %v", err)
				case !res.IsError:
					ok.Add(1)
				case strings.Contains(testenv.Text(res), `upstream "churn"`):
					failed.Add(1)
				default:
					failed.Add(1)
					t.Errorf("churn call failed without naming the upstream: %q", testenv.Text(res))
				}
				res, err = testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "other__echo", "arguments": map[string]any{"text": word}})
				if err != nil || res.IsError || testenv.Text(res) != word {
					otherFailed.Add(1)
					t.Errorf("other upstream failed while churn restarted: %v %q", err, testenv.Text(res))
				}
			}
		}(w)
	}
	// Three rounds of kills, each once the pool has a process again.
	killed, rounds := 0, 0
	dead := map[int]bool{}
	for deadline := time.Now().Add(30 * time.Second); rounds < 3 && time.Now().Before(deadline); {
		var pids []int
		for _, p := range childPIDs(t, marker) {
			if !dead[p] {
				pids = append(pids, p)
			}
		}
		if len(pids) == 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		time.Sleep(200 * time.Millisecond) // let calls reach the process
		for _, p := range pids {
			kill(p)
			dead[p] = true
			killed++
		}
		rounds++
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	t.Logf("killed %d churn processes in %d rounds; churn calls: %d ok, %d failed with a clear error; other failures: %d", killed, rounds, ok.Load(), failed.Load(), otherFailed.Load())
	if rounds < 3 {
		t.Errorf("only %d rounds of kills happened (%d processes)", rounds, killed)
	}
	res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": "churn__echo", "arguments": map[string]any{"text": "back"}})
	if err != nil || res.IsError || testenv.Text(res) != "back" {
		t.Fatalf("churn did not come back after the restarts: %v %q", err, testenv.Text(res))
	}
	for _, p := range childPIDs(t, marker) {
		for _, old := range first {
			if p == old {
				t.Errorf("process %d survived a SIGKILL", p)
			}
		}
	}
}
