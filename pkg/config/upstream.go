package config

import (
	"log/slog"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// UpstreamOptions are the upstream manager's settings from the
// environment (timeouts, stdio pool, result size: a result up to
// MaxSpillBytes is taken, and stored when it is over MaxResultBytes).
func (e Env) UpstreamOptions(log *slog.Logger) upstream.Options {
	return upstream.Options{
		CallTimeout: e.CallTimeout, ConnectTimeout: e.ConnectTimeout, IdleTimeout: e.IdleTimeout,
		StdioPoolSize: e.StdioPoolSize, MaxResultBytes: max(e.MaxResultBytes, e.MaxSpillBytes), Logger: log,
		MaxListTools: e.MaxTools, MaxListPages: e.MaxToolPages,
	}
}
