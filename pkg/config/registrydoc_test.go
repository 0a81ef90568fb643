package config

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

func TestDecodeRegistry(t *testing.T) {
	raw := map[string]json.RawMessage{
		"good":  json.RawMessage(`{"transport":"streamable_http","url":"http://127.0.0.1:1/mcp"}`),
		"bad":   json.RawMessage(`{"transport":`),
		"evil_": json.RawMessage(`{"transport":"streamable_http","url":"http://127.0.0.1:1/mcp"}`),
	}
	var logs strings.Builder
	got := DecodeRegistry(context.Background(), raw, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if g, ok := got["good"]; !ok || g.URL != "http://127.0.0.1:1/mcp" {
		t.Errorf("good = %+v, %v", g, ok)
	}
	if b, ok := got["bad"]; !ok || !strings.Contains(b.Transport, "invalid registry entry") {
		t.Errorf("bad = %+v, %v; want it kept as misconfigured", b, ok)
	}
	if _, ok := got["evil_"]; ok {
		t.Error("an entry with an invalid server id was kept")
	}
	for _, want := range []string{"server=bad", "server=evil_"} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log does not name %s:\n%s", want, logs.String())
		}
	}
}
