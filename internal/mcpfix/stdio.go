package mcpfix

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServeStdio runs stdio (an mcp-go StdioServer of the same MCPServer) on in
// and out, answering the stateless tools/call requests itself: every line
// is read here first, and those the fast path does not answer are passed on
// to stdio unchanged. Each call runs on its own goroutine, as mcp-go's
// worker pool runs them; notifications/cancelled for one of them cancels
// its context (and still reaches mcp-go, for its own requests). Writes to
// out from both sides are serialised, one message per Write.
//
// It sets stdio's context function (server.WithStdioContextFunc) to learn
// the session's context: do not set one of your own.
func (s *Server) ServeStdio(ctx context.Context, stdio *server.StdioServer, in io.Reader, out io.Writer) error {
	w := NewLockedWriter(out)
	ready := make(chan context.Context, 1)
	server.WithStdioContextFunc(func(c context.Context) context.Context {
		ready <- s.BaseContext(c)
		return c
	})(stdio)

	pr, pw := io.Pipe()
	callCtx, cancelCalls := context.WithCancel(ctx)
	defer cancelCalls()
	f := &stdioFilter{s: s, out: w, ready: ready, inflight: make(map[any]*inflightCall)}
	go f.run(callCtx, in, pw)
	err := stdio.Listen(ctx, pr, w)
	// Input processing is over (end of input, ctx, or an error): like
	// mcp-go's own workers, the calls still running are cancelled and
	// waited for. The reader may be blocked on in; it takes no new call
	// and ends at its next line or at the end of input.
	pr.CloseWithError(io.ErrClosedPipe)
	f.mu.Lock()
	f.stopped = true
	f.mu.Unlock()
	cancelCalls()
	f.calls.Wait()
	return err
}

// stdioFilter reads the input lines of a stdio connection.
type stdioFilter struct {
	s     *Server
	out   io.Writer
	ready <-chan context.Context // the session's base context, once stdio has it
	base  context.Context

	mu       sync.Mutex
	inflight map[any]*inflightCall
	stopped  bool // ServeStdio is returning: no new call
	calls    sync.WaitGroup
}

type inflightCall struct{ cancel context.CancelFunc }

var cancelledMethod = []byte(`"` + string(mcp.MethodNotificationCancelled) + `"`)

func (f *stdioFilter) run(ctx context.Context, in io.Reader, pw *io.PipeWriter) {
	ctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll() // input is over: release the handlers still running
	br := bufio.NewReaderSize(in, 64<<10)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 && !f.handle(ctx, line) {
			if bytes.Contains(line, cancelledMethod) {
				f.cancel(line)
			}
			if _, werr := pw.Write(line); werr != nil {
				return
			}
		}
		if err != nil {
			pw.CloseWithError(err)
			return
		}
	}
}

// handle answers line when it is a call the fast path takes, reporting
// whether it did.
func (f *stdioFilter) handle(ctx context.Context, line []byte) bool {
	if !bytes.Contains(line, toolsCall) {
		return false
	}
	if f.base == nil {
		select {
		case base := <-f.ready:
			// Calls end when the connection ends (ctx), with the session's
			// values (base).
			f.base = mergedContext{Context: ctx, values: base}
		case <-ctx.Done():
			return false
		}
	}
	c := f.s.Prepare(f.base, line, nil)
	if c == nil {
		return false
	}
	cctx, cancel := context.WithCancel(f.base)
	call := &inflightCall{cancel: cancel}
	f.mu.Lock()
	if f.stopped {
		f.mu.Unlock()
		cancel()
		return true // the connection is over: dropped, as mcp-go drops unread input
	}
	f.inflight[c.id] = call
	f.calls.Add(1)
	f.mu.Unlock()
	go func() {
		defer f.calls.Done()
		resp := f.s.Run(cctx, c)
		f.mu.Lock()
		if f.inflight[c.id] == call {
			delete(f.inflight, c.id)
		}
		f.mu.Unlock()
		cancel()
		_, _ = f.out.Write(append(resp, '\n'))
	}()
	return true
}

// cancel cancels the call a notifications/cancelled line names, if it is
// one of the fast path's.
func (f *stdioFilter) cancel(line []byte) {
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &n) != nil || n.Method != string(mcp.MethodNotificationCancelled) {
		return
	}
	switch n.Params.RequestID.(type) {
	case float64, string:
	default:
		return
	}
	f.mu.Lock()
	call := f.inflight[n.Params.RequestID]
	delete(f.inflight, n.Params.RequestID)
	f.mu.Unlock()
	if call != nil {
		call.cancel()
	}
}

// mergedContext takes its deadline and cancellation from Context and its
// values from values first.
type mergedContext struct {
	context.Context
	values context.Context
}

func (m mergedContext) Value(key any) any {
	if v := m.values.Value(key); v != nil {
		return v
	}
	return m.Context.Value(key)
}

// LockedWriter serialises writes to an output: each Write is one whole
// message, never interleaved with another. ServeStdio writes through one; a
// server that also writes to the same output itself uses one too.
type LockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewLockedWriter returns a LockedWriter writing to w.
func NewLockedWriter(w io.Writer) *LockedWriter { return &LockedWriter{w: w} }

func (l *LockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
