package httpserve

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// serveTest serves an echo of the request body on 127.0.0.1 with the
// gateway's server settings, the given timeouts, and the listener wrapped
// by IdleUntilFirstByte when wrap is set.
func serveTest(t *testing.T, header, idle time.Duration, wrap bool) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := New(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Write(b)
	}))
	srv.ReadHeaderTimeout, srv.IdleTimeout = header, idle
	var l net.Listener = ln
	if wrap {
		l = IdleUntilFirstByte(ln, idle)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().String()
}

const post = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

// answer writes req on c and reads the status line and body of the
// answer, or returns the read error (io.EOF: the server hung up).
func answer(c net.Conn, br *bufio.Reader, req string) (string, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, req); err != nil {
		return "", err
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.Status + " " + string(b), err
}

// TestUnusedConnection is the load test's rare EOF: a connection a client
// dialed but left unused in its pool for longer than ReadHeaderTimeout.
// net/http alone closes it without an answer, so the POST sent on it then
// fails with EOF; behind IdleUntilFirstByte it waits up to IdleTimeout and
// the POST is answered.
func TestUnusedConnection(t *testing.T) {
	for _, tc := range []struct {
		name string
		wrap bool
		want string // "" = the server hangs up without an answer
	}{
		{"net/http alone", false, ""},
		{"IdleUntilFirstByte", true, "200 OK {}"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			addr := serveTest(t, 100*time.Millisecond, 30*time.Second, tc.wrap)
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			time.Sleep(400 * time.Millisecond) // unused, past ReadHeaderTimeout
			got, err := answer(c, bufio.NewReader(c), post)
			switch {
			case tc.want == "" && err == nil:
				t.Fatalf("server answered %q on a connection idle past ReadHeaderTimeout; this test no longer shows the race", got)
			case tc.want != "" && (err != nil || got != tc.want):
				t.Fatalf("POST on a connection unused for 400ms: %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestFirstByteLimits checks what IdleUntilFirstByte still bounds: a
// connection that never sends is closed after the idle timeout, headers
// must be complete ReadHeaderTimeout after their first byte, and a kept-
// alive connection serves request after request.
func TestFirstByteLimits(t *testing.T) {
	hungUp := func(t *testing.T, c net.Conn) {
		t.Helper()
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		n, err := c.Read(make([]byte, 64))
		if err != io.EOF && !strings.Contains(errString(err), "reset") {
			t.Fatalf("read %d bytes, %v; want the server to hang up", n, err)
		}
	}
	t.Run("silent connection closed after the idle timeout", func(t *testing.T) {
		addr := serveTest(t, 10*time.Second, 200*time.Millisecond, true)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		hungUp(t, c)
	})
	t.Run("headers trickled past ReadHeaderTimeout are cut off", func(t *testing.T) {
		addr := serveTest(t, 200*time.Millisecond, 30*time.Second, true)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"); err != nil {
			t.Fatal(err)
		}
		hungUp(t, c)
	})
	t.Run("keep-alive requests", func(t *testing.T) {
		addr := serveTest(t, 100*time.Millisecond, 30*time.Second, true)
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		br := bufio.NewReader(c)
		for i := 0; i < 3; i++ {
			if i == 2 {
				time.Sleep(300 * time.Millisecond) // idle between requests, past ReadHeaderTimeout
			}
			if got, err := answer(c, br, post); err != nil || got != "200 OK {}" {
				t.Fatalf("request %d: %q, %v", i, got, err)
			}
		}
	})
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
