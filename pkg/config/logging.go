package config

import (
	"io"
	"log/slog"
	"strings"

	"github.com/toolrag/mcp-gateway/internal/redact"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// NewLogger returns the process logger. The level is TOOLRAG_LOG_LEVEL,
// else AWS_LAMBDA_LOG_LEVEL (a Lambda function's log level setting):
// debug, info (default), warn or error; Lambda's TRACE counts as debug and
// FATAL as error. The format is JSON when TOOLRAG_LOG_FORMAT is "json" or
// AWS_LAMBDA_LOG_FORMAT is "JSON" (a Lambda function's JSON log format,
// which CloudWatch Logs Insights queries by field), text otherwise.
func NewLogger(getenv func(string) string, w io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: logLevel(getenv)}
	format := getenv("TOOLRAG_LOG_FORMAT")
	if format == "" {
		format = getenv("AWS_LAMBDA_LOG_FORMAT")
	}
	// Every line goes through redact.Handler: no credential in a URL, no
	// token-like value and no session id is written, whoever logs it.
	// tracing.LogHandler adds the request id (and trace id) of the context.
	if strings.EqualFold(format, "json") {
		return slog.New(tracing.LogHandler(redact.Handler(slog.NewJSONHandler(w, opts))))
	}
	return slog.New(tracing.LogHandler(redact.Handler(slog.NewTextHandler(w, opts))))
}

func logLevel(getenv func(string) string) slog.Level {
	v := getenv("TOOLRAG_LOG_LEVEL")
	if v == "" {
		v = getenv("AWS_LAMBDA_LOG_LEVEL")
	}
	switch strings.ToLower(v) {
	case "trace", "debug":
		return slog.LevelDebug
	case "warn", "warning":
		return slog.LevelWarn
	case "error", "fatal":
		return slog.LevelError
	}
	return slog.LevelInfo
}
