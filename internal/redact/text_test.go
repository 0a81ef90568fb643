package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
)

func TestURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://example.com/mcp", "https://example.com/mcp"},
		{"https://alice:hunter2@example.com/mcp", "https://[redacted]@example.com/mcp"},
		{"postgres://user:password@db:5432/app", "postgres://[redacted]@db:5432/app"},
		{"https://example.com/sse?token=abc123&x=1", "https://example.com/sse?token=[redacted]&x=1"},
		{"https://h/p?Api_Key=k1&sig=s2&Signature=s3&access_token=t&password=p&x_api_key=k4&page=2",
			"https://h/p?Api_Key=[redacted]&sig=[redacted]&Signature=[redacted]&access_token=[redacted]&password=[redacted]&x_api_key=[redacted]&page=2"},
		{"https://h/cb?code=oauthcode&state=s", "https://h/cb?code=[redacted]&state=s"},
		{"https://h/cb#access_token=abc&type=bearer", "https://h/cb#access_token=[redacted]&type=bearer"},
		{"not a url", "not a url"},
	}
	for _, tt := range tests {
		if got := URL(tt.in); got != tt.want {
			t.Errorf("URL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestText(t *testing.T) {
	tests := []struct{ in, want string }{
		{`dial "https://u:pw-123@up.example/mcp?key=K-999": refused`, `dial "https://[redacted]@up.example/mcp?key=[redacted]": refused`},
		{"connecting to postgres://admin:S3cr3t!@db.internal/app failed", "connecting to postgres://[redacted]@db.internal/app failed"},
		{"config: password=hunter2 user=bob", "config: password=[redacted] user=bob"},
		{`DB_PASSWORD="a b c" next`, `DB_PASSWORD=[redacted] next`},
		{"api_key: sk-live-1234 ok", "api_key: [redacted] ok"},
		{"Authorization: Bearer sk-abcdefghijklmnop", "Authorization: Bearer [redacted]"},
		{"exit code=1 after 3s", "exit code=1 after 3s"},
		{"principal oauth:agent-admin", "principal oauth:agent-admin"}, // a principal id, not a credential
		{"nothing to see", "nothing to see"},
	}
	for _, tt := range tests {
		if got := Text(tt.in); got != tt.want {
			t.Errorf("Text(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	id := "mcp-session-0123456789abcdef0123456789abcdef"
	got := Text("session " + id + " gone")
	if strings.Contains(got, id) || !strings.Contains(got, SessionRef(id)) {
		t.Errorf("Text with a session id: %q", got)
	}
}

func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(Handler(slog.NewTextHandler(&buf, nil)))
	id := "mcp-session-0123456789abcdef0123456789abcdef"
	log.With("url", "https://u:pw-with@h/").Info("delivered to "+id, "session", id,
		"error", errors.New("GET https://h/?token=tok-secret: 500"), "down", []string{"x?password=pw-list"},
		slog.Group("g", "stderr", "PGPASSWORD=pw-group"))
	out := buf.String()
	for _, leak := range []string{"pw-with", id, "tok-secret", "pw-list", "pw-group"} {
		if strings.Contains(out, leak) {
			t.Errorf("log line carries %q: %s", leak, out)
		}
	}
	if !strings.Contains(out, SessionRef(id)) {
		t.Errorf("log line lacks the session ref: %s", out)
	}
}
