package session

import (
	"encoding/json"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// headerSessionID is the MCP session header (server.HeaderKeySessionID).
const headerSessionID = "Mcp-Session-Id"

// storeFailures remembers, per session id, a store error that mcp-go's
// SessionIdManager interface cannot return (Generate returns no error;
// Validate's error always becomes 404 "Invalid session ID"), until
// Guard's writer turns the answer into a 503. Two requests of one session
// in flight while the store fails may both be answered 503: both are
// retried.
type storeFailures struct {
	m     sync.Map // session id → error
	count atomic.Int64
}

func (f *storeFailures) note(id string, err error) {
	f.count.Add(1)
	f.m.Store(id, err)
}

func (f *storeFailures) take(id string) bool {
	if id == "" {
		return false
	}
	_, ok := f.m.LoadAndDelete(id)
	return ok
}

// StoreErrors returns how many store calls of Generate, Validate and
// Terminate failed (the store did not answer or answered with an error,
// as opposed to a session that does not exist).
func (m *IDManager) StoreErrors() int64 { return m.failures.count.Load() }

// Guard wraps the MCP handler that uses m: a request whose session-store
// call failed is answered 503 Service Unavailable with Retry-After and a
// JSON-RPC error, instead of the 404 "Invalid session ID" mcp-go writes
// for any Validate error (which tells a client its session is gone, so it
// starts over) or the initialize answer carrying a session id that was
// never stored (whose next request would get that 404).
func (m *IDManager) Guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gw := &guardWriter{ResponseWriter: w, m: m, requestSID: r.Header.Get(headerSessionID)}
		if r.Body != nil && r.Method == http.MethodPost {
			// What mcp-go reads of the body is kept (up to maxIDPeek) so
			// that a 503 answers with the request's JSON-RPC id.
			gw.body = &peekBody{ReadCloser: r.Body}
			r.Body = gw.body
		}
		defer gw.finish()
		var out http.ResponseWriter = gw
		if _, ok := w.(http.Flusher); ok {
			out = flushGuardWriter{gw}
		}
		next.ServeHTTP(out, r)
	})
}

// RetryAfterSeconds is the Retry-After of a 503 for a session-store error.
const RetryAfterSeconds = "1"

type guardWriter struct {
	http.ResponseWriter
	m          *IDManager
	requestSID string
	body       *peekBody
	decided    bool
	swallow    bool
}

// maxIDPeek bounds what Guard keeps of a request body to find its
// JSON-RPC id (an MCP request's id comes before any large argument only
// by chance, so a larger body is answered with "id": null).
const maxIDPeek = 64 << 10

// peekBody records the first maxIDPeek bytes read from a request body.
type peekBody struct {
	io.ReadCloser
	buf  []byte
	over bool
}

func (b *peekBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 && !b.over {
		if len(b.buf)+n > maxIDPeek {
			b.over, b.buf = true, nil
		} else {
			b.buf = append(b.buf, p[:n]...)
		}
	}
	return n, err
}

// requestID returns the JSON-RPC id of the request body read so far, or
// null (a batch, a notification, a body not read or too large).
func (w *guardWriter) requestID() json.RawMessage {
	if w.body != nil && !w.body.over {
		var msg struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(w.body.buf, &msg) == nil && len(msg.ID) > 0 {
			return msg.ID
		}
	}
	return json.RawMessage("null")
}

// decide runs before the first byte of the answer: the session id is the
// request's, or the one an initialize answer carries.
func (w *guardWriter) decide() {
	if w.decided {
		return
	}
	w.decided = true
	sid := w.requestSID
	if sid == "" {
		sid = w.Header().Get(headerSessionID)
	}
	if !w.m.failures.take(sid) {
		return
	}
	w.swallow = true
	h := w.ResponseWriter.Header()
	h.Del(headerSessionID)
	h.Del("Content-Length")
	h.Set("Content-Type", "application/json")
	h.Set("Retry-After", RetryAfterSeconds)
	w.ResponseWriter.WriteHeader(http.StatusServiceUnavailable)
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": w.requestID(), "error": map[string]any{
		"code": -32000, "message": "the session store is unavailable; the session is intact, retry shortly",
	}})
	_, _ = w.ResponseWriter.Write(append(body, '\n'))
}

func (w *guardWriter) WriteHeader(code int) {
	w.decide()
	if !w.swallow {
		w.ResponseWriter.WriteHeader(code)
	}
}

func (w *guardWriter) Write(p []byte) (int, error) {
	w.decide()
	if w.swallow {
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// finish drops a failure noted for a request that wrote nothing.
func (w *guardWriter) finish() {
	if !w.decided {
		w.m.failures.take(w.requestSID)
	}
}

// Unwrap lets http.ResponseController reach the connection's writer.
func (w *guardWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

type flushGuardWriter struct{ *guardWriter }

func (w flushGuardWriter) Flush() {
	w.decide()
	if !w.swallow {
		w.ResponseWriter.(http.Flusher).Flush()
	}
}
