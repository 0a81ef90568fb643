package gateway

import (
	"context"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// publicError is what a caller reads of an upstream failure: without the
// upstream's stderr and without credentials in URLs (an upstream URL with
// a password, a token in a query). It still unwraps to the original error.
func publicError(err error) error {
	if err == nil {
		return nil
	}
	return &callerErr{msg: redact.Text(upstream.CallerMessage(err)), err: err}
}

type callerErr struct {
	msg string
	err error
}

func (e *callerErr) Error() string { return e.msg }
func (e *callerErr) Unwrap() error { return e.err }

// callerError logs an upstream failure of a prompt or resource for
// operators (whole, through the redacting log handler) and returns what
// the caller may read of it (publicError). Tool calls log theirs in the
// audit line.
func (g *Server) callerError(ctx context.Context, server string, err error) error {
	g.log.WarnContext(ctx, "upstream request failed", "server", server, "method", requestMethod(ctx), "error", err)
	return publicError(err)
}
