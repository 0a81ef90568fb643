package upstream

import (
	"context"
	"io"
	"mime"
	"net/http"
	"sync/atomic"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
)

// callState records what happened on the wire during one call, so that a
// failure can be worded precisely and the retry rule can tell whether a
// request reached the server. The mcp-go client passes the call's context
// down to the transport and to net/http, which is how the state travels.
type callState struct {
	sent     atomic.Bool  // an HTTP request body was written completely
	tooLarge atomic.Int64 // size of a response over the limit (-1: size unknown)
	status   atomic.Int32 // HTTP status of the last response

	// Set in the caller's goroutine by the wire wrappers below.
	sendErr  error                    // the transport failed (nothing usable came back)
	rpcErr   *mcp.JSONRPCErrorDetails // the server answered with a JSON-RPC error
	answered bool                     // a result came back
}

type callStateKey struct{}

func withCallState(ctx context.Context) (context.Context, *callState) {
	st := &callState{}
	return context.WithValue(ctx, callStateKey{}, st), st
}

func callStateFrom(ctx context.Context) *callState {
	st, _ := ctx.Value(callStateKey{}).(*callState)
	return st
}

// observe records the outcome of one request in the call's state and
// enforces the result size limit on what the transport decoded.
func observe(ctx context.Context, resp *transport.JSONRPCResponse, err error, limit int64) (*transport.JSONRPCResponse, error) {
	if err == nil && resp != nil && resp.Error == nil && int64(len(resp.Result)) <= limit {
		mcpfix.CaptureRaw(ctx, resp.Result)
	}
	st := callStateFrom(ctx)
	if st == nil {
		return resp, err
	}
	switch {
	case err != nil:
		st.sendErr = err
	case resp == nil:
		st.sendErr = io.ErrUnexpectedEOF
	case resp.Error != nil:
		st.rpcErr = resp.Error
		st.answered = true
	case int64(len(resp.Result)) > limit:
		st.tooLarge.Store(int64(len(resp.Result)))
		return nil, tooLarge(int64(len(resp.Result)), limit)
	default:
		st.answered = true
	}
	return resp, err
}

// The wire wrappers embed the mcp-go transports (so every optional interface
// the client looks for is still there) and observe each request.

type stdioWire struct {
	*transport.Stdio
	limit int64
}

func (w *stdioWire) SendRequest(ctx context.Context, r transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := w.Stdio.SendRequest(ctx, r)
	return observe(ctx, resp, err, w.limit)
}

type streamableWire struct {
	*transport.StreamableHTTP
	limit int64
}

func (w *streamableWire) SendRequest(ctx context.Context, r transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := w.StreamableHTTP.SendRequest(ctx, r)
	return observe(ctx, resp, err, w.limit)
}

type sseWire struct {
	*transport.SSE
	limit int64
}

func (w *sseWire) SendRequest(ctx context.Context, r transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
	resp, err := w.SSE.SendRequest(ctx, r)
	return observe(ctx, resp, err, w.limit)
}

// limitTransport bounds the bytes an HTTP upstream can make the gateway
// read: a JSON body as a whole, an event stream line by line (one SSE data
// line carries one message). Going over records the size in the call's state
// and fails the read, which ends that response (or that SSE stream).
type limitTransport struct {
	base  http.RoundTripper
	limit int64
}

// frameSlack covers the JSON-RPC envelope and SSE field names around a result.
const frameSlack = 4 << 10

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || resp.Body == nil {
		return resp, err
	}
	st := callStateFrom(req.Context())
	if st != nil {
		st.status.Store(int32(resp.StatusCode))
	}
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	resp.Body = &limitBody{rc: resp.Body, limit: t.limit + frameSlack, perLine: mt == "text/event-stream", st: st, max: t.limit}
	return resp, nil
}

type limitBody struct {
	rc      io.ReadCloser
	limit   int64 // bytes allowed (per line for event streams)
	max     int64 // the configured MaxResultBytes, for the message
	perLine bool
	n       int64 // bytes counted so far (in the current line)
	st      *callState
	err     error
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.rc.Read(p)
	if b.perLine {
		for _, c := range p[:n] {
			if c == '\n' {
				b.n = 0
			} else {
				b.n++
				if b.n > b.limit {
					break
				}
			}
		}
	} else {
		b.n += int64(n)
	}
	if b.n > b.limit {
		if b.st != nil {
			b.st.tooLarge.Store(-1)
		}
		b.err = tooLarge(0, b.max)
		return 0, b.err
	}
	return n, err
}

func (b *limitBody) Close() error { return b.rc.Close() }
