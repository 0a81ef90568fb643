// Package httpserve provides the HTTP server settings every listener of the
// project uses (the gateway, the stdio bridge, the load-test harness): a
// header timeout against slow senders, an idle timeout above Go clients'
// pool timeout, and a listener that counts a new connection's wait for its
// first byte as idle time, so that a pooled but unused client connection
// is never closed under a client that is about to use it. ForeignHostOnLoopback
// is the check against DNS rebinding that mcp-go and a gateway without
// authentication share.
package httpserve

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// Timeouts of the gateway's HTTP server.
const (
	// ReadHeaderTimeout bounds reading a request's headers, counted from
	// the request's first byte.
	ReadHeaderTimeout = 10 * time.Second
	// IdleTimeout bounds how long a connection may wait for a request: its
	// first one or the next. It is above the 90s IdleConnTimeout of Go's
	// http.DefaultTransport (which mcp-go clients use unless given another
	// client), so such a client retires a pooled connection before the
	// server closes it, and never sends a request on a connection the
	// server is closing.
	IdleTimeout = 2 * time.Minute
)

// New returns a server with these timeouts for h. Serve it on a
// listener wrapped by IdleUntilFirstByte:
//
//	srv := httpserve.New(h)
//	srv.Serve(httpserve.IdleUntilFirstByte(ln, srv.IdleTimeout))
func New(h http.Handler) *http.Server {
	return &http.Server{Handler: h, ReadHeaderTimeout: ReadHeaderTimeout, IdleTimeout: IdleTimeout}
}

// IdleUntilFirstByte wraps ln so that a new connection may wait up to idle
// for its first byte before the server's ReadHeaderTimeout starts.
//
// net/http waits for a kept-alive connection's next request under
// IdleTimeout and starts ReadHeaderTimeout only once its bytes arrive, but
// it starts ReadHeaderTimeout on a new connection as soon as it is
// accepted. A Go client that dials a connection for a request and then
// serves that request from another connection that came free (the
// Transport does this under load) keeps the fresh connection in its pool
// unused; after ReadHeaderTimeout the server closes it without a word,
// and a client that takes it from the pool at that moment sees its POST
// fail with EOF, which net/http does not retry. Behind this listener the
// wait for the first byte counts as idle time, as it does for every later
// request, and a slow sender still has ReadHeaderTimeout from its first
// byte to finish the headers. idle <= 0 leaves the wait unbounded.
func IdleUntilFirstByte(ln net.Listener, idle time.Duration) net.Listener {
	return &firstByteListener{Listener: ln, idle: idle}
}

type firstByteListener struct {
	net.Listener
	idle time.Duration
}

func (l *firstByteListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &firstByteConn{Conn: c, idle: l.idle}, nil
}

// firstByteConn holds back the read deadlines set before its first byte
// arrives and applies them, shifted to start at that byte, once it has.
type firstByteConn struct {
	net.Conn
	idle time.Duration

	mu       sync.Mutex
	started  bool      // a byte has arrived
	deadline time.Time // the read deadline asked for before that
	setAt    time.Time // when it was asked for
}

func (c *firstByteConn) Read(p []byte) (int, error) {
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if started {
		return c.Conn.Read(p)
	}
	var wait time.Time
	if c.idle > 0 {
		wait = time.Now().Add(c.idle)
	}
	if err := c.Conn.SetReadDeadline(wait); err != nil {
		return 0, err
	}
	n, err := c.Conn.Read(p)
	if n == 0 {
		return n, err // idle timeout, EOF or a closed connection: the server hangs up
	}
	c.mu.Lock()
	c.started = true
	deadline := c.deadline
	if !deadline.IsZero() {
		deadline = time.Now().Add(c.deadline.Sub(c.setAt))
	}
	c.mu.Unlock()
	if derr := c.Conn.SetReadDeadline(deadline); derr != nil && err == nil {
		err = derr
	}
	return n, err
}

func (c *firstByteConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	if !c.started {
		now := time.Now()
		c.deadline, c.setAt = t, now
		c.mu.Unlock()
		if !t.IsZero() && !t.After(now) {
			// A deadline already past aborts a pending read: let it through.
			return c.Conn.SetReadDeadline(t)
		}
		return nil
	}
	c.mu.Unlock()
	return c.Conn.SetReadDeadline(t)
}

func (c *firstByteConn) SetDeadline(t time.Time) error {
	if err := c.SetReadDeadline(t); err != nil {
		return err
	}
	return c.Conn.SetWriteDeadline(t)
}

// CloseWrite lets net/http half-close the connection after an error
// response, as it does on a bare TCP connection.
func (c *firstByteConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return errors.ErrUnsupported
}

// ForeignHostOnLoopback reports whether r came over a loopback connection
// with a Host header that names another machine: what a DNS-rebinding page
// sends. mcp-go refuses such requests; a gateway without authentication
// does too.
func ForeignHostOnLoopback(r *http.Request) bool {
	local, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok || local == nil {
		return false
	}
	return loopbackHost(local.String()) && !loopbackHost(r.Host)
}

// loopbackHost reports whether a host or host:port is localhost or a
// loopback address.
func loopbackHost(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}
