package loadtest

import (
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestConnDiagnostics: a POST the server hangs up on fails with an error
// naming the connection, and the tracker counts the connections by how
// they ended.
func TestConnDiagnostics(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var tr connTracker
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/hangup" {
				c, _, err := http.NewResponseController(w).Hijack()
				if err == nil {
					c.Close()
				}
				return
			}
			w.Write([]byte("ok"))
		}),
		ConnState: tr.observe,
	}
	go srv.Serve(ln)
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	hc := &http.Client{Transport: connTracing{http.DefaultTransport.(*http.Transport).Clone()}}
	resp, err := hc.Post(base+"/ok", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	io.ReadAll(resp.Body) // to EOF, so the connection goes back to the pool
	resp.Body.Close()
	_, err = hc.Post(base+"/hangup", "application/json", strings.NewReader("{}"))
	if err == nil || !strings.Contains(err.Error(), "EOF") || !strings.Contains(err.Error(), "request written: true, response byte: false") {
		t.Fatalf("POST the server hung up on: %v", err)
	}
	if !strings.Contains(err.Error(), "reused connection") {
		t.Errorf("the second POST went out on the pooled connection, error says %v", err)
	}
	// A connection dialed and never used.
	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	want := ConnStats{Accepted: 2, ClosedNew: 1, ClosedActive: 1} // the unused one; the hang-up
	var got ConnStats
	for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if got = tr.snapshot(); got == want {
			return
		}
	}
	t.Errorf("conn stats %+v, want %+v", got, want)
}
