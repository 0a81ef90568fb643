package testenv

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// Hang returns a wait for an HTTP handler that must not answer: it blocks
// until the request is cancelled (its client gave up) or the test ends,
// for tests of client timeouts. Call it after starting the server, so that
// its cleanup, which runs first, lets the handlers return before the
// server's Close waits for them.
func Hang(t testing.TB) func(r *http.Request) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	return func(r *http.Request) { hang(r, release) }
}

// HangingServer serves HTTP on a loopback port until the test ends; no
// request is ever answered (see Hang).
func HangingServer(t testing.TB) *httptest.Server {
	t.Helper()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { hang(r, release) }))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) }) // runs first
	return srv
}

func hang(r *http.Request, release <-chan struct{}) {
	select {
	case <-r.Context().Done():
	case <-release:
	}
}
