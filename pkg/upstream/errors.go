package upstream

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Kinds of upstream failure; test with errors.Is on an *Error. Timeouts match
// context.DeadlineExceeded and cancellations context.Canceled.
var (
	// ErrUnknownServer: no server with that id is configured.
	ErrUnknownServer = errors.New("no upstream server with this id is configured")
	// ErrResultTooLarge: a response exceeded Options.MaxResultBytes.
	ErrResultTooLarge = errors.New("upstream result is too large")
	// ErrUnavailable: the server could not be started or reached, its
	// process died, or its connection was lost.
	ErrUnavailable = errors.New("upstream server is unavailable")
	// ErrInvalidResponse: the server answered with something that is not a
	// valid JSON-RPC response or MCP result.
	ErrInvalidResponse = errors.New("upstream sent an invalid response")
	// ErrListTruncated: a server's tools/list went over Options.MaxListTools
	// or MaxListPages; ListTools returned the tools it kept.
	ErrListTruncated = errors.New("upstream tool list is over the gateway's limit")
)

// Error is the error of one operation on one upstream server. Its message is
// meant for the person who reads it, e.g.
//
//	upstream "fs": tools/call did not answer within 30s
//	upstream "fs": tools/call failed: the server process exited (exit status 1) during the call; stderr: ...
type Error struct {
	Server string // server id
	Op     string // MCP method, e.g. "tools/call"
	Err    error
}

func (e *Error) Error() string {
	msg := "failed"
	if e.Err != nil {
		msg = e.Err.Error()
		var p *problem
		if !errors.As(e.Err, &p) || !p.predicate {
			msg = "failed: " + msg
		}
	}
	return "upstream " + strconv.Quote(e.Server) + ": " + e.Op + " " + msg
}

func (e *Error) Unwrap() error { return e.Err }

// problem is a worded failure that matches a kind (a sentinel above or a
// context error) and keeps its cause for errors.Is/As.
type problem struct {
	msg       string
	kind      error
	cause     error
	predicate bool // msg reads after the op ("did not answer ..."), not after "failed: "
}

func (p *problem) Error() string { return p.msg }

func (p *problem) Unwrap() []error {
	var out []error
	if p.kind != nil {
		out = append(out, p.kind)
	}
	if p.cause != nil {
		out = append(out, p.cause)
	}
	return out
}

func newProblem(kind, cause error, format string, args ...any) *problem {
	return &problem{msg: fmt.Sprintf(format, args...), kind: kind, cause: cause}
}

// errCallTimeout is the cancel cause of a call that ran past its timeout.
var errCallTimeout = errors.New("upstream call timeout")

// contextProblem words a failure caused by the call's context: our timeout,
// the caller's deadline or the caller's cancellation. It returns nil when
// the context is still live. hint is appended to a timeout message.
func contextProblem(callCtx, parent context.Context, timeout time.Duration, hint string) *problem {
	if callCtx.Err() == nil {
		return nil
	}
	if parent.Err() == nil && errors.Is(context.Cause(callCtx), errCallTimeout) {
		return &problem{msg: "did not answer within " + fmtDuration(timeout) + hint, kind: context.DeadlineExceeded, predicate: true}
	}
	switch {
	case errors.Is(parent.Err(), context.DeadlineExceeded):
		return &problem{msg: "did not answer before the caller's deadline" + hint, kind: context.DeadlineExceeded, predicate: true}
	case parent.Err() != nil:
		return &problem{msg: "was canceled by the caller", kind: context.Canceled, predicate: true}
	}
	return &problem{msg: "did not answer in time" + hint, kind: context.DeadlineExceeded, predicate: true}
}

// fmtDuration prints 30s, 1.5s, 250ms, 2m0s.
func fmtDuration(d time.Duration) string {
	if d >= time.Second && d%time.Second == 0 && d < time.Minute {
		return strconv.Itoa(int(d/time.Second)) + "s"
	}
	return d.String()
}

// fmtBytes prints 512 bytes, 3.5 KiB, 8 MiB.
func fmtBytes(n int64) string {
	switch {
	case n < 1<<10:
		return strconv.FormatInt(n, 10) + " bytes"
	case n < 1<<20:
		return trimZero(float64(n)/(1<<10)) + " KiB"
	case n < 1<<30:
		return trimZero(float64(n)/(1<<20)) + " MiB"
	default:
		return trimZero(float64(n)/(1<<30)) + " GiB"
	}
}

func trimZero(f float64) string {
	s := strconv.FormatFloat(f, 'f', 1, 64)
	if len(s) > 2 && s[len(s)-2:] == ".0" {
		s = s[:len(s)-2]
	}
	return s
}

// tooLarge words a response that exceeded the limit.
func tooLarge(size, limit int64) *problem {
	if size <= 0 {
		return newProblem(ErrResultTooLarge, nil, "the server's response is larger than the %s limit (MaxResultBytes)", fmtBytes(limit))
	}
	return newProblem(ErrResultTooLarge, nil, "the server's response of %s is larger than the %s limit (MaxResultBytes)", fmtBytes(size), fmtBytes(limit))
}

// stderrMarker starts the stderr tail a failure of a stdio server quotes.
const stderrMarker = "; its last stderr lines: "

// CallerMessage returns err's message as the caller of a tool, prompt or
// resource may read it: without the stderr tail of a stdio server (which
// can hold anything the server printed, its own credentials included).
// The full error is for operators, in the gateway's log.
func CallerMessage(err error) string {
	msg := err.Error()
	for {
		i := strings.Index(msg, stderrMarker)
		if i < 0 {
			return msg
		}
		rest := msg[i+len(stderrMarker):]
		q, qerr := strconv.QuotedPrefix(rest)
		if qerr != nil {
			q = rest
		}
		msg = msg[:i] + "; its stderr is in the gateway's log" + rest[len(q):]
	}
}

// quoteTail shortens s for an error message.
func quoteTail(s string, max int) string {
	if len(s) > max {
		s = "…" + s[len(s)-max:]
	}
	return strconv.Quote(s)
}

// quoteHead shortens s for an error message.
func quoteHead(s string, max int) string {
	if len(s) > max {
		s = s[:max] + "…"
	}
	return strconv.Quote(s)
}

// duringInitialize rewords a failure of the initialize handshake; a server
// that cannot be initialised counts as unavailable.
func duringInitialize(p *problem) *problem {
	c := *p
	c.msg = "initialize: " + c.msg
	if c.kind == nil {
		c.kind = ErrUnavailable
	}
	return &c
}
