package policy

import (
	"errors"
	"strings"
	"testing"
)

func TestCanonicalURI(t *testing.T) {
	tests := []struct{ in, want string }{
		{"demo://resource/static/document/instructions.md", "demo://resource/static/document/instructions.md"},
		{"demo://resource/dynamic/../static/document/instructions.md", "demo://resource/static/document/instructions.md"},
		{"demo://resource/dynamic/%2e%2e/static/x", "demo://resource/static/x"},
		{"demo://resource/dynamic/%2E%2E/static/x", "demo://resource/static/x"},
		{"demo://resource/dynamic/.%2e/./static/x", "demo://resource/static/x"},
		{"demo://resource/a/b/../../../../x", "demo://resource/x"},
		{"demo://resource/a/..", "demo://resource/"},
		{"DEMO://Resource/Path", "demo://resource/Path"},
		{"https://User:Pw@Example.COM:8443/A%7eb", "https://User:Pw@example.com:8443/A~b"},
		{"file:///pub/%61%62c", "file:///pub/abc"},
		{"file:///pub/a%3ab", "file:///pub/a%3Ab"},
		{"file:///pub/a%c3%a9", "file:///pub/a%C3%A9"},
		{"x:a/./b/../c", "x:a/c"},
		{"urn:isbn:0451450523", "urn:isbn:0451450523"},
		{"echo://items/7?q=a%2fb#frag%7e", "echo://items/7?q=a%2Fb#frag~"},
		{"echo://items/../../x?../y", "echo://items/x?../y"},
		{"echo://info", "echo://info"},
		{"echo://", "echo://"},
	}
	for _, tt := range tests {
		got, err := CanonicalURI(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CanonicalURI(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		if again, err := CanonicalURI(got); err != nil || again != got {
			t.Errorf("CanonicalURI is not idempotent on %q: %q, %v", got, again, err)
		}
	}
}

func TestCanonicalURIRefuses(t *testing.T) {
	for _, in := range []string{
		"", "no-scheme/path", "/abs/path", "1x://a", "://a",
		"demo://resource/dynamic/..%2fstatic", "demo://resource/dynamic/..%2Fstatic",
		"demo://resource/dynamic/..%5cstatic", `demo://resource/dynamic\..\static`,
		"demo://resource/a%00b", "demo://resource/a%zz", "demo://resource/a%4", "demo://resource/a%",
		"demo://resource/a\nb", "demo://resource/a\x7f", "demo://resource/\xff",
		"x:/a/..//b", "demo://" + strings.Repeat("a", MaxURIBytes),
	} {
		got, err := CanonicalURI(in)
		if err == nil {
			t.Errorf("CanonicalURI(%q) = %q, want an error", in, got)
		} else if !errors.Is(err, ErrInvalid) {
			t.Errorf("CanonicalURI(%q): error %v is not ErrInvalid", in, err)
		}
	}
}

func TestMatchURIPrefix(t *testing.T) {
	tests := []struct {
		prefix, uri string
		want        bool
	}{
		{"file:///pub", "file:///pub", true},
		{"file:///pub", "file:///pub/a", true},
		{"file:///pub", "file:///pub?x", true},
		{"file:///pub", "file:///public", false},
		{"file:///pub/", "file:///pub/a", true},
		{"file:///pub/", "file:///pub", false},
		{"echo://items/", "echo://items/7", true},
		{"echo://info", "echo://info", true},
		{"echo://info", "echo://information", false},
		{"echo://", "echo://anything", true},
		{"urn:x:", "urn:x:y", true},
		{"demo://resource/dynamic/", "demo://resource/static/x", false},
		{"*", "anything:at-all", true},
	}
	for _, tt := range tests {
		if got := MatchURIPrefix(tt.prefix, tt.uri); got != tt.want {
			t.Errorf("MatchURIPrefix(%q, %q) = %v, want %v", tt.prefix, tt.uri, got, tt.want)
		}
	}
}

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"echo", "get-sum", "greeting", "évènement", "a__b"} {
		if err := CheckName("tool", ok); err != nil {
			t.Errorf("CheckName(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a\x00b", "a\nb", "a\u0085b", "\xff", strings.Repeat("a", MaxNameBytes+1)} {
		if err := CheckName("prompt", bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("CheckName(%q) = %v, want ErrInvalid", bad, err)
		}
	}
}

// FuzzCanonicalURI: whatever the input, a canonical URI is its own
// canonical form, has no "." or ".." path segment (raw or encoded), no
// encoded "/", and grants under a prefix only on a segment boundary.
func FuzzCanonicalURI(f *testing.F) {
	for _, s := range []string{
		"demo://resource/dynamic/../static/document/instructions.md", "demo://resource/dynamic/%2e%2e/x",
		"file:///pub/a%2fb", "HTTPS://User@Host:1/%7e/./a?b#c", "x:a/../../b", "urn:isbn:1", "a:", "a://",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := CanonicalURI(in)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		again, err := CanonicalURI(out)
		if err != nil || again != out {
			t.Fatalf("not idempotent: %q → %q → %q, %v", in, out, again, err)
		}
		path := out
		if i := strings.IndexAny(path, "?#"); i >= 0 {
			path = path[:i]
		}
		if i := strings.Index(path, "://"); i >= 0 {
			path = path[i+3:]
			if j := strings.IndexByte(path, '/'); j >= 0 {
				path = path[j:] // the authority is not a path segment
			} else {
				path = ""
			}
		} else if i := strings.IndexByte(path, ':'); i >= 0 {
			path = path[i+1:]
		}
		for _, seg := range strings.Split(path, "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("%q → %q keeps a dot segment", in, out)
			}
		}
		if strings.Contains(strings.ToUpper(path), "%2F") || strings.Contains(strings.ToUpper(path), "%2E") {
			t.Fatalf("%q → %q keeps an encoded / or .", in, out)
		}
		if !MatchURIPrefix(out, out) {
			t.Fatalf("%q does not match itself", out)
		}
	})
}
