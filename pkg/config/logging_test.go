package config

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestNewLogger(t *testing.T) {
	tests := []struct {
		name  string
		env   map[string]string
		level slog.Level
		json  bool
	}{
		{"defaults", nil, slog.LevelInfo, false},
		{"toolrag level", map[string]string{"TOOLRAG_LOG_LEVEL": "debug"}, slog.LevelDebug, false},
		{"lambda level", map[string]string{"AWS_LAMBDA_LOG_LEVEL": "WARN"}, slog.LevelWarn, false},
		{"lambda trace", map[string]string{"AWS_LAMBDA_LOG_LEVEL": "TRACE"}, slog.LevelDebug, false},
		{"lambda fatal", map[string]string{"AWS_LAMBDA_LOG_LEVEL": "FATAL"}, slog.LevelError, false},
		{"toolrag wins", map[string]string{"TOOLRAG_LOG_LEVEL": "error", "AWS_LAMBDA_LOG_LEVEL": "DEBUG"}, slog.LevelError, false},
		{"unknown level", map[string]string{"TOOLRAG_LOG_LEVEL": "loud"}, slog.LevelInfo, false},
		{"lambda json", map[string]string{"AWS_LAMBDA_LOG_FORMAT": "JSON"}, slog.LevelInfo, true},
		{"toolrag json", map[string]string{"TOOLRAG_LOG_FORMAT": "json"}, slog.LevelInfo, true},
		{"toolrag text wins", map[string]string{"TOOLRAG_LOG_FORMAT": "text", "AWS_LAMBDA_LOG_FORMAT": "JSON"}, slog.LevelInfo, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := NewLogger(func(k string) string { return tt.env[k] }, &buf)
			for _, l := range []slog.Level{slog.LevelDebug, slog.LevelInfo, slog.LevelWarn, slog.LevelError} {
				if got, want := log.Enabled(context.Background(), l), l >= tt.level; got != want {
					t.Errorf("Enabled(%v) = %v, want %v", l, got, want)
				}
			}
			log.Error("hello", "k", "v")
			line := strings.TrimSpace(buf.String())
			var m map[string]any
			if isJSON := json.Unmarshal([]byte(line), &m) == nil; isJSON != tt.json {
				t.Errorf("JSON output = %v, want %v: %s", isJSON, tt.json, line)
			}
		})
	}
}
