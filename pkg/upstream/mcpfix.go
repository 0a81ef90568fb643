package upstream

import (
	"context"
	"io"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/mcpfix"
)

// What the upstream package takes from internal/mcpfix: the tools/call
// caller of a 2026-07-28 connection, and the frame checks a stdio upstream.s
// stdout goes through mcpfix.FrameReader before mcp-go's
// client reads it; here its findings are worded for the user.

// newFrameReader reads the frames of a stdio upstream's stdout; an
// oversized frame without an id ends the stream with ErrResultTooLarge.
func newFrameReader(r io.Reader, max int64) *mcpfix.FrameReader {
	f := mcpfix.NewFrameReader(r, max)
	f.TooLarge = func(size, max int64) error { return tooLarge(size, max) }
	return f
}

// garbageHint describes the lines f dropped for an error message ("" if none).
func garbageHint(f *mcpfix.FrameReader) string {
	n, last := f.Garbage()
	if n == 0 {
		return ""
	}
	noun := "lines"
	if n == 1 {
		noun = "line"
	}
	return " (the server wrote " + strconv.Itoa(n) + " " + noun +
		" to stdout that are not JSON-RPC, last: " + quoteHead(last, 120) +
		"; a stdio server must write only JSON-RPC to stdout and log to stderr)"
}

// guardError recognises an error response made up by mcpfix.FrameReader
// and words it; ok is false for any other message.
func guardError(message string, limit int64) (p *problem, ok bool) {
	i := strings.Index(message, mcpfix.GuardMarker)
	if i < 0 {
		return nil, false
	}
	rest := message[i:]
	switch {
	case strings.HasPrefix(rest, mcpfix.GuardTooLarge):
		n, _ := strconv.ParseInt(strings.TrimSpace(rest[len(mcpfix.GuardTooLarge):]), 10, 64)
		return tooLarge(n, limit), true
	case strings.HasPrefix(rest, mcpfix.GuardInvalid):
		return newProblem(ErrInvalidResponse, nil, "the server sent an invalid JSON-RPC response: %s", rest[len(mcpfix.GuardInvalid):]), true
	}
	return nil, false
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// statelessCaps are the capabilities the relay's handlers make the mcp-go
// client declare, which the stateless caller declares too.
func statelessCaps() mcp.ClientCapabilities {
	return mcp.ClientCapabilities{Sampling: &mcp.SamplingCapability{}, Elicitation: &mcp.ElicitationCapability{}, Extensions: Extensions()}
}

// statelessFrom returns the stateless caller of the connection the call of
// ctx runs on (nil when there is none).
func statelessFrom(ctx context.Context) *mcpfix.StatelessCaller {
	if in, ok := ctx.Value(inflightKey{}).(*inflight); ok {
		return in.hub.stateless
	}
	return nil
}
