package redact

import (
	"strings"
	"testing"
)

func TestSnippet(t *testing.T) {
	tests := []struct {
		body, secret, want string
	}{
		{"", "", "(empty body)"},
		{"  bad\n  key sk-123 \t here ", "sk-123", "bad key [redacted] here"},
		{"no secret set", "", "no secret set"},
	}
	for _, tt := range tests {
		if got := Snippet([]byte(tt.body), tt.secret); got != tt.want {
			t.Errorf("Snippet(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
	long := Snippet([]byte(strings.Repeat("x", 1000)), "")
	if len(long) != 300+len("…") {
		t.Errorf("long body: %d bytes", len(long))
	}
}
