package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestFromEnvDefaults(t *testing.T) {
	e, err := FromEnv(env(nil))
	if err != nil {
		t.Fatal(err)
	}
	// The gateway listens on loopback only unless MCP_GATEWAY_HOST says
	// otherwise (issue #11).
	if e.Port != 8765 || e.Host != "127.0.0.1" || e.MCPPath != "/mcp" || e.MaxParallel != 8 ||
		e.RegistryPath != filepath.Join("config", "registry.yaml") || e.StartupReindex != "full" ||
		e.HealthInterval != 30*time.Second || e.ShortlistDescChars != 300 || e.DBPath != "tool_registry.db" ||
		e.AuthFailureLimit().Burst != 30 || e.AuthFailureLimit().Rate != 0.5 || e.TrustForwardedFor || e.ConfigPoll != 2*time.Second {
		t.Fatalf("defaults: %+v", e)
	}
}

func TestFromEnvErrors(t *testing.T) {
	tests := []struct {
		vars map[string]string
		want string
	}{
		{map[string]string{"MCP_GATEWAY_PORT": "99999"}, "MCP_GATEWAY_PORT"},
		{map[string]string{"TOOL_RAG_MAX_PARALLEL": "x"}, "TOOL_RAG_MAX_PARALLEL"},
		{map[string]string{"TOOL_RAG_STARTUP_REINDEX": "sometimes"}, "TOOL_RAG_STARTUP_REINDEX"},
		{map[string]string{"MCP_GATEWAY_KEYS": "relative/keys.yaml"}, "absolute"},
		{map[string]string{"TOOL_RAG_WITHOUT_AUTH": "maybe"}, "TOOL_RAG_WITHOUT_AUTH"},
		{map[string]string{"MCP_GATEWAY_MCP_PATH": "mcp"}, "must start with /"},
		{map[string]string{"TOOL_RAG_HEALTHCHECK_INTERVAL": "-1"}, "TOOL_RAG_HEALTHCHECK_INTERVAL"},
	}
	for _, tt := range tests {
		if _, err := FromEnv(env(tt.vars)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %v, want mention of %q", tt.vars, err, tt.want)
		}
	}
	e, err := FromEnv(env(map[string]string{"MCP_GATEWAY_KEYS": "/etc/k.yaml", "TOOL_RAG_RESYNC_INTERVAL": "1.5", "TOOL_RAG_WITHOUT_AUTH": "1"}))
	if err != nil || e.KeysPath != "/etc/k.yaml" || e.ResyncInterval != 1500*time.Millisecond || !e.WithoutAuth {
		t.Fatalf("%+v %v", e, err)
	}
}

func TestParseRegistry(t *testing.T) {
	good := `servers:
  echo:
    transport: stdio
    command: go
    args: [run, ./servers/echo]
    env: {LOG: info}
  web:
    transport: streamable_http
    url: http://127.0.0.1:9000/mcp
    headers: {Authorization: "Bearer ${TOOLRAG_UPSTREAM_TOKEN}", X-Listed: "${LISTED}"}
    timeout: 15s
`
	got, err := ParseRegistry("r.yaml", []byte(good), env(map[string]string{"TOOLRAG_UPSTREAM_TOKEN": "t0k", "LISTED": "l", "TOOL_RAG_UPSTREAM_ENV": "LISTED"}))
	if err != nil {
		t.Fatal(err)
	}
	if got["echo"].Command != "go" || len(got["echo"].Args) != 2 || got["web"].Headers["Authorization"] != "Bearer t0k" || got["web"].Headers["X-Listed"] != "l" || got["web"].Timeout != 15*time.Second {
		t.Fatalf("parsed: %+v", got)
	}
	bad := []struct{ doc, want string }{
		{"servers:\n  a__b:\n    transport: stdio\n    command: x\n", `r.yaml:2: server "a__b"`},
		{"servers:\n  evil: {transport: stdio, command: x}\n  evil_:\n    transport: stdio\n    command: x\n", `r.yaml:3: server "evil_": server id "evil_" must not start or end with "_"`},
		{"servers:\n  _evil:\n    transport: stdio\n    command: x\n", `r.yaml:2: server "_evil"`},
		{"servers:\n  ok:\n    transport: carrier-pigeon\n", `r.yaml:2: server "ok"`},
		{"servers:\n  ok:\n    transport: stdio\n", "command"},
		{"servers:\n  ok:\n    transport: sse\n    url: not-a-url\n", "url"},
		{"servers:\n  ok:\n    transport: stdio\n    command: x\n    colour: red\n", `r.yaml:5: server "ok": unknown field "colour"`},
		{"servers:\n  ok:\n    transport: sse\n    url: http://x/sse\n    headers: {A: \"${TOOLRAG_UPSTREAM_MISSING}\"}\n", "header A needs environment variable TOOLRAG_UPSTREAM_MISSING, which is not set"},
		{"servers:\n  ok:\n    transport: sse\n    url: http://x/sse\n    headers: {A: \"${UNLISTED}\"}\n", `r.yaml:2: server "ok": header A needs secret UNLISTED: environment variable UNLISTED may not be read by registry headers: name it TOOLRAG_UPSTREAM_UNLISTED, or list it in TOOL_RAG_UPSTREAM_ENV`},
		{"servers:\n  ok:\n    transport: sse\n    url: http://x/sse\n    headers: {X-Trace: \"${AWS_SECRET_ACCESS_KEY}:$TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET\"}\n", `r.yaml:2: server "ok": header X-Trace names ${AWS_SECRET_ACCESS_KEY}, which registry headers may never read`},
		{"servers:\n  ok:\n    transport: sse\n    url: http://x/sse\n    headers: {X-Trace: \"$TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET\"}\n", `header X-Trace names ${TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET}, which registry headers may never read: TOOLRAG_OAUTH_INTROSPECTION_CLIENT_SECRET is reserved`},
		{"servers: [1, 2]\n", "must be a mapping"},
		{"servers:\n  ok: {transport: stdio, command: x, timeout: soon}\n", "timeout"},
		{"{{{", "invalid YAML"},
	}
	for _, b := range bad {
		if _, err := ParseRegistry("r.yaml", []byte(b.doc), env(nil)); err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want %q", b.doc, err, b.want)
		}
	}
}

func TestLoadRegistryMerge(t *testing.T) {
	dir := t.TempDir()
	hand := filepath.Join(dir, "registry.yaml")
	gen := filepath.Join(dir, "registry.generated.yaml")
	os.WriteFile(gen, []byte("servers:\n  a: {transport: stdio, command: generated}\n  b: {transport: stdio, command: gen-b}\n"), 0o644)
	os.WriteFile(hand, []byte("servers:\n  a: {transport: stdio, command: hand}\n"), 0o644)
	got, err := LoadRegistry(hand, gen, env(nil))
	if err != nil {
		t.Fatal(err)
	}
	if got["a"].Command != "hand" || got["b"].Command != "gen-b" || len(got) != 2 {
		t.Fatalf("merge: %+v", got)
	}
	if got, err := LoadRegistry(filepath.Join(dir, "none.yaml"), "", env(nil)); err != nil || len(got) != 0 {
		t.Fatalf("missing files: %v %v", got, err)
	}
}

func TestParseKeys(t *testing.T) {
	good := `keys:
  - id: a
    secret: s1
    admin: true
    servers: {echo: {}}
  - id: b
    secret_hash: "sha256:` + strings.Repeat("ab", 32) + `"
    servers:
      echo: {tool_prefixes: [get_]}
    rate_limit: {rate: 5, burst: 10}
`
	keys, err := ParseKeys("k.yaml", []byte(good))
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 2 || !keys[0].Admin || keys[0].SecretHash == "s1" || !keys[0].MatchesSecret("s1") ||
		keys[1].Servers["echo"].ToolPrefixes[0] != "get_" || keys[1].RateLimit.Burst != 10 {
		t.Fatalf("keys: %+v", keys)
	}
	bad := []struct{ doc, want string }{
		{"keys:\n  - secret: s\n", "id is required"},
		{"keys:\n  - id: a\n", "one of secret or secret_hash is required"},
		{"keys:\n  - id: a\n    secret: s\n    secret_hash: sha256:00\n", "not both"},
		{"keys:\n  - id: a\n    secret_hash: md5:00\n", "sha256"},
		{"keys:\n  - id: a\n    secret: s\n  - id: a\n    secret: t\n", `k.yaml:4: key "a": duplicate key id`},
		{"keys:\n  - id: a\n    secret: s\n  - id: b\n    secret: s\n", `same secret as key "a"`},
		{"keys:\n  - id: a\n    secret: s\n    servers: {echo: {tool_prefix: [x]}}\n", `unknown field "tool_prefix"`},
		{"keys:\n  - id: a\n    secret: s\n    admn: true\n", `unknown field "admn"`},
		{"keys:\n  - id: a\n    secret: s\n    servers: {\"bad id\": {}}\n", "must match"},
		{"keys: {a: 1}\n", "must be a list"},
		{"keys:\n  - id: a\n    secret: s\n    servers: {evil_: {}}\n", `must not start or end with "_"`},
		{"keys:\n  - id: a\n    secret: s\n    servers:\n      ev: {uri_prefixes: [\"demo://x/%zz\"]}\n", `k.yaml:2: key "a": server "ev": uri_prefixes: malformed percent-encoding`},
		{"keys:\n  - id: a\n    secret: s\n    servers:\n      ev: {uri_prefixes: [\"no-scheme\"]}\n", "is not an absolute URI"},
		{"keys:\n  - id: a\n    secret: s\n    servers:\n      ev:\n", `k.yaml:5: key "a": server "ev": the rule is empty`},
		{"keys:\n  - id: a\n    secret: s\n    servers:\n      ev: all\n", `k.yaml:5: key "a": server "ev": the rule must be {} or "*"`},
	}
	for _, b := range bad {
		_, err := ParseKeys("k.yaml", []byte(b.doc))
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%q: error %v, want %q", b.doc, err, b.want)
		}
		if err != nil && strings.Contains(err.Error(), "s1") {
			t.Errorf("error leaks a secret: %v", err)
		}
	}
}

// TestParseKeysRuleForms: "*" and {} grant the whole server; a named list
// with no value is an explicit empty list; URI prefixes are stored in
// canonical form.
func TestParseKeysRuleForms(t *testing.T) {
	doc := `keys:
  - id: a
    secret: s1
    servers:
      star: "*"
      whole: {}
      tools: {tool_prefixes: [get]}
      none:
        tool_prefixes: []
        uri_prefixes:
        prompt_prefixes: ~
      uris: {uri_prefixes: ["DEMO://Resource/dynamic/%2e%2e/dynamic/"]}
`
	keys, err := ParseKeys("k.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	s := keys[0].Servers
	if !s["star"].Whole() || !s["whole"].Whole() || s["tools"].Whole() {
		t.Errorf("whole-server forms: %+v", s)
	}
	if s["tools"].URIPrefixes != nil || s["tools"].PromptPrefixes != nil {
		t.Errorf("lists not named must stay nil: %+v", s["tools"])
	}
	n := s["none"]
	if n.ToolPrefixes == nil || n.URIPrefixes == nil || n.PromptPrefixes == nil || len(n.ToolPrefixes)+len(n.URIPrefixes)+len(n.PromptPrefixes) != 0 {
		t.Errorf("named empty lists must be empty, not nil: %#v", n)
	}
	if got := s["uris"].URIPrefixes; len(got) != 1 || got[0] != "demo://resource/dynamic/" {
		t.Errorf("uri_prefixes not canonical: %q", got)
	}
}

func FuzzParseKeys(f *testing.F) {
	f.Add([]byte("keys:\n  - id: a\n    secret: s\n    servers: {echo: {tool_prefixes: [x]}}\n"))
	f.Add([]byte("keys: [{id: b, secret_hash: 'sha256:00'}]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		keys, err := ParseKeys("fuzz.yaml", data)
		if err != nil {
			return
		}
		for _, k := range keys {
			if k.ID == "" || !strings.HasPrefix(k.SecretHash, "sha256:") || len(k.SecretHash) != 71 {
				t.Fatalf("accepted an invalid key: %+v", k)
			}
		}
	})
}

func FuzzParseRegistry(f *testing.F) {
	f.Add([]byte("servers:\n  echo: {transport: stdio, command: go, args: [run, .]}\n"))
	f.Add([]byte("servers:\n  web: {transport: sse, url: 'http://h/sse', headers: {A: '${X}'}}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		servers, err := ParseRegistry("fuzz.yaml", data, func(string) string { return "v" })
		if err != nil {
			return
		}
		for id, s := range servers {
			if err := s.Validate(); err != nil {
				t.Fatalf("accepted invalid server %q: %v", id, err)
			}
		}
	})
}

func TestParseKeysExpiresAt(t *testing.T) {
	doc := "keys:\n  - id: a\n    secret: s1\n    expires_at: 2027-01-31\n  - id: b\n    secret: s2\n    expires_at: \"2027-02-01T18:30:00+01:00\"\n  - id: c\n    secret: s3\n"
	keys, err := ParseKeys("k.yaml", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	if !keys[0].ExpiresAt.Equal(time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)) ||
		!keys[1].ExpiresAt.Equal(time.Date(2027, 2, 1, 17, 30, 0, 0, time.UTC)) || !keys[2].ExpiresAt.IsZero() {
		t.Fatalf("expires_at: %v, %v, %v", keys[0].ExpiresAt, keys[1].ExpiresAt, keys[2].ExpiresAt)
	}
	if !keys[0].Expired(time.Date(2027, 1, 31, 0, 0, 0, 0, time.UTC)) || keys[0].Expired(time.Date(2027, 1, 30, 23, 59, 0, 0, time.UTC)) || keys[2].Expired(time.Now()) {
		t.Fatal("Expired disagrees with expires_at")
	}
	_, err = ParseKeys("k.yaml", []byte("keys:\n  - id: a\n    secret: s1\n    expires_at: next tuesday\n"))
	if err == nil || !strings.Contains(err.Error(), "k.yaml:2") || !strings.Contains(err.Error(), "expires_at") || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("bad expires_at: %v", err)
	}
}

// TestExampleKeys: config/keys.example.yaml (what `make run` copies) parses
// and means what its comments say under the explicit grant model.
func TestExampleKeys(t *testing.T) {
	keys, err := LoadKeys(filepath.Join("..", "..", "config", "keys.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]policy.Policy{}
	for _, k := range keys {
		byID[k.ID] = policy.For(k)
	}
	full, restricted := byID["dev-full"], byID["dev-restricted"]
	checks := []struct {
		name string
		got  bool
		want bool
	}{
		{"full: any tool", full.AllowsTool("echo", "reverse"), true},
		{"full: any prompt", full.AllowsPrompt("echo", "greeting"), true},
		{"full: any resource", full.AllowsURI("echo", "echo://items/1"), true},
		{"restricted: echo tool", restricted.AllowsTool("echo", "echo"), true},
		{"restricted: reverse tool", restricted.AllowsTool("echo", "reverse"), false},
		{"restricted: echo://info", restricted.AllowsURI("echo", "echo://info"), true},
		{"restricted: echo://items/1", restricted.AllowsURI("echo", "echo://items/1"), false},
		{"restricted: no prompt", restricted.AllowsPrompt("echo", "greeting"), false},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, c.got, c.want)
		}
	}
	for _, k := range keys {
		if lines := policy.ChangedMeaning(k); len(lines) > 0 {
			t.Errorf("the example key %q triggers a changed-meaning warning: %q", k.ID, lines)
		}
	}
}
