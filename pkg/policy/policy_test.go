package policy

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPolicyAllows(t *testing.T) {
	k := Key{ID: "k", Servers: map[string]Rule{
		"echo": {},
		"fs":   {ToolPrefixes: []string{"read_"}, URIPrefixes: []string{"file:///pub/"}, PromptPrefixes: []string{"p"}},
	}}
	p := For(k)
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"full server tool", p.AllowsTool("echo", "anything"), true},
		{"full server uri", p.AllowsURI("echo", "x://y"), true},
		{"prefix tool ok", p.AllowsTool("fs", "read_file"), true},
		{"prefix tool denied", p.AllowsTool("fs", "write_file"), false},
		{"prefix uri ok", p.AllowsURI("fs", "file:///pub/a"), true},
		{"prefix uri denied", p.AllowsURI("fs", "file:///etc/passwd"), false},
		{"prefix prompt denied", p.AllowsPrompt("fs", "q"), false},
		{"ungranted server", p.AllowsTool("other", "x"), false},
		{"zero policy", Policy{}.AllowsTool("echo", "x"), false},
		{"unrestricted", Unrestricted().AllowsTool("any", "x"), true},
		{"narrow keeps", p.Narrow([]string{"fs"}).AllowsTool("fs", "read_x"), true},
		{"narrow drops", p.Narrow([]string{"fs"}).AllowsTool("echo", "x"), false},
		{"narrow cannot widen", p.Narrow([]string{"other"}).AllowsTool("other", "x"), false},
		{"narrow keeps prefixes", p.Narrow([]string{"fs"}).AllowsTool("fs", "write_x"), false},
		{"narrow empty is identity", p.Narrow(nil).AllowsTool("echo", "x"), true},
		{"grant says nothing", p.NoGrant() == "", true},
		{"unrestricted says nothing", Unrestricted().NoGrant() == "", true},
		{"empty grant explained", For(Key{ID: "none"}).NoGrant() != "", true},
		{"narrowed to nothing explained", p.Narrow([]string{"other"}).NoGrant() != "", true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func TestSecretHash(t *testing.T) {
	k := Key{ID: "k", SecretHash: HashSecret("s3cret")}
	if !k.MatchesSecret("s3cret") || k.MatchesSecret("s3cret ") || k.MatchesSecret("") {
		t.Fatal("MatchesSecret")
	}
	want := HashSecret("x")
	if _, err := ParseSecretHash(strings.ToUpper(want[:7]) + strings.ToUpper(want[7:])); err == nil {
		t.Fatal("ParseSecretHash accepted an upper-case scheme")
	}
	h, err := ParseSecretHash("sha256:" + strings.ToUpper(want[7:]))
	if err != nil || h != want {
		t.Fatalf("ParseSecretHash = %q, %v", h, err)
	}
	for _, bad := range []string{"", "md5:00", "sha256:zz", "sha256:abcd"} {
		if _, err := ParseSecretHash(bad); err == nil {
			t.Errorf("ParseSecretHash(%q) should fail", bad)
		}
	}
}

// TestRuleSemantics: a rule that names tool_prefixes only grants no
// prompts or resources; an empty list grants nothing of its kind; {} and
// "*" grant the whole server. Before the explicit model, the first two
// granted every prompt and resource of the server.
func TestRuleSemantics(t *testing.T) {
	p := For(Key{ID: "k", Servers: map[string]Rule{
		"tools-only": {ToolPrefixes: []string{"get"}},
		"empty":      {ToolPrefixes: []string{}, URIPrefixes: []string{}, PromptPrefixes: []string{}},
		"whole":      {},
		"wild":       {ToolPrefixes: []string{"*"}, URIPrefixes: []string{"*"}, PromptPrefixes: []string{Wildcard}},
		"uris":       {URIPrefixes: []string{"demo://resource/dynamic/"}},
	}})
	tests := []struct {
		name string
		got  bool
		want bool
	}{
		{"tools-only grants its tools", p.AllowsTool("tools-only", "get_x"), true},
		{"tools-only denies other tools", p.AllowsTool("tools-only", "put_x"), false},
		{"tools-only grants no prompt", p.AllowsPrompt("tools-only", "greeting"), false},
		{"tools-only grants no resource", p.AllowsURI("tools-only", "echo://info"), false},
		{"tools-only lists no template", p.MayAllowURIPrefix("tools-only", "echo://items/"), false},
		{"empty lists grant no tool", p.AllowsTool("empty", "x"), false},
		{"empty lists grant no prompt", p.AllowsPrompt("empty", "x"), false},
		{"empty lists grant no resource", p.AllowsURI("empty", "echo://info"), false},
		{"{} grants tools", p.AllowsTool("whole", "x"), true},
		{"{} grants prompts", p.AllowsPrompt("whole", "x"), true},
		{"{} grants resources", p.AllowsURI("whole", "echo://info"), true},
		{"* grants tools", p.AllowsTool("wild", "x"), true},
		{"* grants resources", p.AllowsURI("wild", "any:thing"), true},
		{"* grants prompts", p.AllowsPrompt("wild", "x"), true},
		{"uris grants no tool", p.AllowsTool("uris", "x"), false},
		{"uris grants its URIs", p.AllowsURI("uris", "demo://resource/dynamic/1"), true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

// TestAllowsURICanonical: a URI is compared in canonical form, so ".."
// (raw or percent-encoded) cannot climb out of a granted prefix, and a
// prefix grants on segment boundaries only.
func TestAllowsURICanonical(t *testing.T) {
	p := For(Key{ID: "k", Servers: map[string]Rule{
		"ev": {URIPrefixes: []string{"demo://resource/dynamic/"}},
		"fs": {URIPrefixes: []string{"FILE:///pub"}},
	}})
	tests := []struct {
		uri  string
		want bool
	}{
		{"demo://resource/dynamic/1", true},
		{"DEMO://Resource/dynamic/1", true},
		{"demo://resource/dynamic/%31", true},
		{"demo://resource/dynamic/../static/document/instructions.md", false},
		{"demo://resource/dynamic/%2e%2e/static/document/instructions.md", false},
		{"demo://resource/dynamic/%2E%2E/static/document/instructions.md", false},
		{"demo://resource/dynamic/..%2fstatic/document/instructions.md", false},
		{"demo://resource/dynamic/a/../../static/x", false},
		{"demo://resource/dynamic/a/../2", true},
		{"demo://resource/dynamic", false},
	}
	for _, tt := range tests {
		if got := p.AllowsURI("ev", tt.uri); got != tt.want {
			t.Errorf("AllowsURI(ev, %q) = %v, want %v", tt.uri, got, tt.want)
		}
	}
	if !p.AllowsURI("fs", "file:///pub/a") || !p.AllowsURI("fs", "file:///pub") || p.AllowsURI("fs", "file:///public/a") {
		t.Error("file:///pub must grant file:///pub and file:///pub/a, not file:///public/a")
	}
}

func TestChangedMeaningAndUnknownServers(t *testing.T) {
	k := Key{ID: "k", Servers: map[string]Rule{
		"a": {ToolPrefixes: []string{"get"}},
		"b": {},
		"c": {ToolPrefixes: []string{"x"}, URIPrefixes: []string{"u://"}, PromptPrefixes: []string{}},
	}}
	got := ChangedMeaning(k)
	if len(got) != 2 || !strings.Contains(got[0], `server "a"`) || !strings.Contains(got[0], "does not name uri_prefixes") ||
		!strings.Contains(got[1], "does not name prompt_prefixes") {
		t.Errorf("ChangedMeaning = %q (an explicit empty list, as in c, is not warned about)", got)
	}
	unknown := UnknownServers(k, func(id string) bool { return id == "b" })
	if strings.Join(unknown, ",") != "a,c" {
		t.Errorf("UnknownServers = %v", unknown)
	}
}

// BenchmarkAllowsURI: the cost of one resource policy check (the URI is
// made canonical on every check).
func BenchmarkAllowsURI(b *testing.B) {
	p := For(Key{ID: "k", Servers: map[string]Rule{"ev": {URIPrefixes: []string{"demo://resource/dynamic/", "file:///srv/pub/", "https://example.com/docs/"}}}})
	for _, uri := range []string{
		"demo://resource/dynamic/text/12345",
		"demo://resource/dynamic/%2e%2e/static/document/instructions.md",
	} {
		b.Run(uri[len(uri)-12:], func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				p.AllowsURI("ev", uri)
			}
		})
	}
}

// A policy survives JSON (a task's asynchronous invocation carries it).
func TestPolicyJSON(t *testing.T) {
	p := For(Key{ID: "k", Servers: map[string]Rule{"fs": {ToolPrefixes: []string{"read"}}}})
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var q Policy
	if err := json.Unmarshal(raw, &q); err != nil {
		t.Fatal(err)
	}
	if q.KeyID != "k" || !q.AllowsTool("fs", "read") || q.AllowsTool("fs", "write_x") || q.AllowsTool("other", "read") {
		t.Fatalf("after JSON: %+v from %s", q, raw)
	}
}
