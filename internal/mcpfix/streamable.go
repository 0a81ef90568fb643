package mcpfix

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/server"
)

// What mcp-go's StreamableHTTPServer gets wrong or leaves out around the
// session lifecycle, fixed in front of it.

// OwnSession answers a GET or DELETE that names a session ids does not
// validate (another principal's, or none) with 404, exactly as mcp-go
// answers an unknown session on POST, and reports whether the request may
// go on. mcp-go does not validate the session of a GET (it would open a
// stream on any id, and receive that session's sampling requests), and
// answers a failed DELETE with 500. ids is asked only for such a request.
func OwnSession(w http.ResponseWriter, r *http.Request, ids func() server.SessionIdManager) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodDelete {
		return true
	}
	sid := r.Header.Get(server.HeaderKeySessionID)
	if sid == "" {
		return true
	}
	if _, err := ids().Validate(sid); err != nil {
		WriteInvalidSession(w)
		return false
	}
	return true
}

// WriteInvalidSession writes mcp-go's answer to a request naming an
// unknown session.
func WriteInvalidSession(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusNotFound)
	_, _ = io.WriteString(w, "Invalid session ID\n")
}

// KeepSessions is the session id manager to give mcp-go's idle sweeper
// (a SessionIdManagerResolver asked with a nil request): it drops this
// instance's transport state of a session idle here, which must not end
// the session itself. It validates nothing and terminates nothing.
type KeepSessions struct{}

func (KeepSessions) Generate() string               { return "" }
func (KeepSessions) Validate(string) (bool, error)  { return false, errors.New("no principal") }
func (KeepSessions) Terminate(string) (bool, error) { return false, nil }

// RelayEvents is an mcp-go EventStore that records nothing. It is there for
// its effect on the POST path: without an event store, mcp-go's
// notification forwarder can take a notification off the session channel
// just as the handler returns, find the request finished and drop it, so a
// response would sometimes lack a notification sent during the request
// (notifications/tools/list_changed, a relayed progress notification).
// With an event store, the request waits for the forwarder and every
// notification is written before the result. Events get no ids, so nothing
// is offered for resumption.
type RelayEvents struct{}

var _ server.EventStore = RelayEvents{}

func (RelayEvents) StoreEvent(context.Context, string, string, json.RawMessage) (string, error) {
	return "", nil
}

func (RelayEvents) ReplayEventsAfter(context.Context, string, string, func(string, json.RawMessage) error) (string, error) {
	return "", server.ErrUnknownEventID
}

func (RelayEvents) PurgeSession(context.Context, string) error { return nil }

// InitGate holds the requests of a session whose initialize is still being
// handled until it is done. mcp-go registers a session only after it has
// written the initialize response, so without it the client's next request
// (or its GET stream) could be served with a stand-in session: one without
// the client's capabilities, whose sampling requests nothing reads. The
// zero value is ready to use.
type InitGate struct {
	initializing sync.Map // session id → channel closed when its initialize is done
}

// Wait holds r while its session's initialize is handled, and reports
// false if the client went away meanwhile.
func (g *InitGate) Wait(r *http.Request) bool {
	ch, ok := loadSession(&g.initializing, r)
	if !ok {
		return true
	}
	select {
	case <-ch.(chan struct{}):
		return true
	case <-r.Context().Done():
		return false
	}
}

// Initialize wraps the response writer of an initialize request: the
// session id it carries is marked initializing before the first byte goes
// out, until done is called (when mcp-go's handler, and with it its
// registration of the session, is over).
func (g *InitGate) Initialize(w http.ResponseWriter) (_ http.ResponseWriter, done func()) {
	iw := &initWriter{ResponseWriter: w, g: g}
	if _, ok := w.(http.Flusher); ok {
		return flushInitWriter{iw}, iw.done
	}
	return iw, iw.done
}

// initWriter wraps the response to an initialize request.
type initWriter struct {
	http.ResponseWriter
	g   *InitGate
	sid string
	ch  chan struct{}
}

func (w *initWriter) mark() {
	if w.ch != nil {
		return
	}
	w.ch = make(chan struct{})
	if w.sid = w.Header().Get(server.HeaderKeySessionID); w.sid != "" {
		w.g.initializing.Store(w.sid, w.ch)
	}
}

func (w *initWriter) WriteHeader(code int) {
	w.mark()
	w.ResponseWriter.WriteHeader(code)
}

func (w *initWriter) Write(p []byte) (int, error) {
	w.mark()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *initWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *initWriter) done() {
	if w.ch == nil {
		return
	}
	if w.sid != "" {
		w.g.initializing.Delete(w.sid)
	}
	close(w.ch)
}

// flushInitWriter is an initWriter over a writer that can stream (mcp-go
// streams only when the writer is an http.Flusher, so a writer that cannot
// must not look like one).
type flushInitWriter struct{ *initWriter }

func (w flushInitWriter) Flush() {
	w.mark()
	w.ResponseWriter.(http.Flusher).Flush()
}
