package upstream

import (
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// blackhole accepts TCP connections and never answers: a server that is
// down behind a firewall or a hung host (each request waits for the
// connect timeout).
func blackhole(t *testing.T) (addr string, accepted *atomic.Int32, stop func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = &atomic.Int32{}
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			conns = append(conns, c)
		}
	}()
	stop = func() {
		ln.Close()
		<-done
		for _, c := range conns {
			c.Close()
		}
	}
	t.Cleanup(stop)
	return ln.Addr().String(), accepted, stop
}

// TestLongCallsDownServerFailsFast (issue "Calls that need the user, take
// long or return a lot", item 4): a call to a server known to be down
// answers at once, naming the server and since when; one call is let
// through after a back-off, and a server that came back is used again
// without waiting for a health check.
func TestLongCallsDownServerFailsFast(t *testing.T) {
	addr, accepted, stop := blackhole(t)
	m, _ := newTestManager(t, Options{ConnectTimeout: 500 * time.Millisecond, CallTimeout: 5 * time.Second})
	m.SetServers(map[string]ServerConfig{"slow": {Transport: TransportStreamableHTTP, URL: "http://" + addr + "/mcp"}})
	ctx := ctxT(t, 60*time.Second)

	for i := 0; i < breakerThreshold; i++ {
		start := time.Now()
		_, err := m.CallTool(ctx, "slow", "x", nil)
		if !errors.Is(err, ErrUnavailable) || (i == 0 && time.Since(start) < 400*time.Millisecond) {
			t.Fatalf("call %d to the hung server: %v after %v; want ErrUnavailable after the connect timeout", i, err, time.Since(start))
		}
	}
	before := accepted.Load()
	start := time.Now()
	_, err := m.CallTool(ctx, "slow", "x", nil)
	took := time.Since(start)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), `upstream "slow"`) || !strings.Contains(err.Error(), "is down since") {
		t.Fatalf("call to a server known down: %v", err)
	}
	if took > 100*time.Millisecond || accepted.Load() != before {
		t.Errorf("the refused call took %v and opened %d connections; want an answer at once without reaching the server", took, accepted.Load()-before)
	}
	t.Logf("refused in %v: %v", took, err)

	// The server comes back on the same address.
	stop()
	g := newGoHTTPServer(t)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen on %s again: %v", addr, err)
	}
	back := &http.Server{Handler: g.Config.Handler}
	go back.Serve(ln)
	t.Cleanup(func() { back.Close() })
	// Calls are still refused until the back-off ends; then one is let
	// through, succeeds, and every later call goes through.
	deadline := time.Now().Add(breakerMaxBackoff)
	var res any
	for time.Now().Before(deadline) {
		res, err = m.CallTool(ctx, "slow", "whoami", nil)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "is down since") {
			t.Fatalf("while backing off: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil || res == nil {
		t.Fatalf("the recovered server was not used again within %v: %v", breakerMaxBackoff, err)
	}
	if _, err := m.CallTool(ctx, "slow", "whoami", nil); err != nil {
		t.Errorf("after the probe succeeded: %v", err)
	}
}

// TestLongCallsHealthViewDown: a server the health check found down is
// answered at once from the first call, and a health check that succeeds
// closes the breaker.
func TestLongCallsHealthViewDown(t *testing.T) {
	g := newGoHTTPServer(t)
	var hits atomic.Int32
	inner := g.Config.Handler
	g.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hits.Add(1); inner.ServeHTTP(w, r) })
	m, _ := newTestManager(t, Options{})
	m.SetServers(map[string]ServerConfig{"go": {Transport: TransportStreamableHTTP, URL: g.URL + "/mcp"}})
	since := time.Now().Add(-time.Second)
	var down atomic.Bool
	down.Store(true)
	m.SetHealthView(func(id string) (bool, time.Time, string) {
		return id == "go" && down.Load(), since, "connection refused"
	})
	ctx := ctxT(t, 30*time.Second)
	start := time.Now()
	_, err := m.CallTool(ctx, "go", "whoami", nil)
	if err == nil || !strings.Contains(err.Error(), "is down since "+since.UTC().Format(time.RFC3339)) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("call to a server the health check found down: %v", err)
	}
	if took := time.Since(start); took > 100*time.Millisecond || hits.Load() != 0 {
		t.Errorf("took %v, %d requests reached the server; want an answer at once", took, hits.Load())
	}
	// The health check itself is never held back; its success reopens
	// the server to calls although the view still says down.
	if err := m.Ping(ctx, "go"); err != nil {
		t.Fatalf("health check: %v", err)
	}
	if _, err := m.CallTool(ctx, "go", "whoami", nil); err != nil {
		t.Errorf("after a successful health check: %v", err)
	}
}
