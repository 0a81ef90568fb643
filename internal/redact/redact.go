// Package redact shortens what remote services answer so it can go into an
// error message without flooding logs or leaking the caller's API key.
package redact

import "strings"

// Snippet returns body on one line, at most 300 bytes, with every
// occurrence of secret (when set) replaced by "[redacted]".
func Snippet(body []byte, secret string) string {
	s := strings.TrimSpace(string(body))
	if secret != "" {
		s = strings.ReplaceAll(s, secret, "[redacted]")
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	if s == "" {
		return "(empty body)"
	}
	return s
}
