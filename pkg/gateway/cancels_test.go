package gateway

import (
	"encoding/json"
	"testing"
)

// TestCancelKey: a cancel record names one request of one principal in
// one session, with the request id compared as JSON-RPC peers compare it.
func TestCancelKey(t *testing.T) {
	base, ok := cancelKey("alice", "mcp-session-1", json.RawMessage(`7`))
	if !ok {
		t.Fatal("no key for id 7")
	}
	for _, tc := range []struct {
		name, principal, sid, id string
		ok, same                 bool
	}{
		{"same request", "alice", "mcp-session-1", `7`, true, true},
		{"same number written otherwise", "alice", "mcp-session-1", `7.0`, true, true},
		{"string id", "alice", "mcp-session-1", `"7"`, true, false},
		{"another principal", "bob", "mcp-session-1", `7`, true, false},
		{"another session", "alice", "mcp-session-2", `7`, true, false},
		{"no session", "alice", "", `7`, true, false},
		{"null id", "alice", "mcp-session-1", `null`, false, false},
		{"no id", "alice", "mcp-session-1", ``, false, false},
		{"invalid id", "alice", "mcp-session-1", `{`, false, false},
	} {
		k, ok := cancelKey(tc.principal, tc.sid, json.RawMessage(tc.id))
		if ok != tc.ok || (ok && (k == base) != tc.same) {
			t.Errorf("%s: key %q ok=%v; want ok=%v, same=%v", tc.name, k, ok, tc.ok, tc.same)
		}
	}
}
