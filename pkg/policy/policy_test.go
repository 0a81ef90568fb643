package policy

import (
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
