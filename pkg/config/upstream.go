package config

import (
	"log/slog"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// UpstreamOptions are the upstream manager's settings from the
// environment (timeouts, stdio pool, result size).
func (e Env) UpstreamOptions(log *slog.Logger) upstream.Options {
	return upstream.Options{
		CallTimeout: e.CallTimeout, ConnectTimeout: e.ConnectTimeout, IdleTimeout: e.IdleTimeout,
		StdioPoolSize: e.StdioPoolSize, MaxResultBytes: e.MaxResultBytes, Logger: log,
		MaxListTools: e.MaxTools, MaxListPages: e.MaxToolPages,
	}
}
