// Canonical identities: what a request names is made canonical before any
// policy decision: resource URIs (RFC 3986 §6.2.2 syntax-based
// normalisation), URI prefix matching on segment boundaries, and the names
// of tools and prompts. Every surface of the gateway (resources/read,
// subscribe, unsubscribe, completion refs, templates, prompts/get, tool
// calls) and the policy itself use them, so that what is checked is exactly
// what is forwarded upstream.

package policy

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
)

// MaxURIBytes bounds a resource URI.
const MaxURIBytes = 8192

// ErrInvalid marks an identity that cannot be made canonical; the gateway
// answers it with JSON-RPC invalid params.
var ErrInvalid = errors.New("invalid identity")

// invalidError is an ErrInvalid worded for the caller.
type invalidError struct{ msg string }

func (e *invalidError) Error() string        { return e.msg }
func (e *invalidError) Is(target error) bool { return target == ErrInvalid }

func invalid(format string, args ...any) error {
	return &invalidError{msg: fmt.Sprintf(format, args...)}
}

// CanonicalURI returns the syntax-based normal form of an absolute URI
// (RFC 3986 §6.2.2): the scheme and host in lower case, percent-encoded
// unreserved characters decoded and every other percent-encoding in upper
// case, and the "." and ".." segments of the path removed (§5.2.4). It
// refuses, rather than guesses at, what has no single meaning: no scheme,
// a malformed percent-encoding, control characters, an encoded or literal
// backslash or an encoded "/" or NUL in the path or authority (upstreams
// disagree on whether they separate segments), and a path that would
// resolve above nothing into an authority.
func CanonicalURI(s string) (string, error) {
	if s == "" {
		return "", invalid("the URI is empty")
	}
	if len(s) > MaxURIBytes {
		return "", invalid("the URI is %d bytes; the limit is %d", len(s), MaxURIBytes)
	}
	if !utf8.ValidString(s) {
		return "", invalid("the URI is not valid UTF-8")
	}
	for _, r := range s {
		if r < 0x20 || r == 0x7f {
			return "", invalid("the URI contains a control character")
		}
	}
	colon := strings.IndexByte(s, ':')
	if colon <= 0 || !validScheme(s[:colon]) {
		return "", invalid("%q is not an absolute URI (it must start with a scheme such as file: or https:)", clip(s))
	}
	scheme := strings.ToLower(s[:colon])
	rest := s[colon+1:]

	var fragment, query string
	hasFragment, hasQuery := false, false
	if i := strings.IndexByte(rest, '#'); i >= 0 {
		fragment, rest, hasFragment = rest[i+1:], rest[:i], true
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		query, rest, hasQuery = rest[i+1:], rest[:i], true
	}
	var authority, path string
	hasAuthority := strings.HasPrefix(rest, "//")
	if hasAuthority {
		rest = rest[2:]
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			authority, path = rest[:i], rest[i:]
		} else {
			authority = rest
		}
	} else {
		path = rest
	}

	origAuthority, origPath, origQuery, origFragment := authority, path, query, fragment
	var err error
	if authority, err = normalizePercent(authority, true); err != nil {
		return "", err
	}
	authority = lowerHost(authority)
	if path, err = normalizePercent(path, true); err != nil {
		return "", err
	}
	path = removeDotSegments(path)
	if !hasAuthority && strings.HasPrefix(path, "//") {
		return "", invalid("the path of %q resolves to one starting with \"//\", which would read as an authority", clip(s))
	}
	if query, err = normalizePercent(query, false); err != nil {
		return "", err
	}
	if fragment, err = normalizePercent(fragment, false); err != nil {
		return "", err
	}

	if scheme == s[:colon] && authority == origAuthority && path == origPath && query == origQuery && fragment == origFragment {
		return s, nil // already canonical: no copy
	}
	var b strings.Builder
	b.Grow(len(s))
	b.WriteString(scheme)
	b.WriteByte(':')
	if hasAuthority {
		b.WriteString("//")
		b.WriteString(authority)
	}
	b.WriteString(path)
	if hasQuery {
		b.WriteByte('?')
		b.WriteString(query)
	}
	if hasFragment {
		b.WriteByte('#')
		b.WriteString(fragment)
	}
	return b.String(), nil
}

// CanonicalURIPrefix is CanonicalURI for a granted prefix: a prefix may
// end anywhere, so it only needs to be canonical on its own.
func CanonicalURIPrefix(s string) (string, error) {
	if s == "*" {
		return s, nil
	}
	return CanonicalURI(s)
}

// MatchURIPrefix reports whether the canonical uri lies under the
// canonical prefix on a segment boundary: uri equals prefix, or prefix
// ends with a delimiter ("/", "?", "#" or ":"), or the character of uri
// after prefix is one. So "file:///pub" grants "file:///pub/a" but not
// "file:///public", and "echo://items/" grants "echo://items/7".
func MatchURIPrefix(prefix, uri string) bool {
	if prefix == "*" {
		return true
	}
	if !strings.HasPrefix(uri, prefix) {
		return false
	}
	if len(uri) == len(prefix) || prefix == "" {
		return true
	}
	return isDelim(prefix[len(prefix)-1]) || isNextDelim(uri[len(prefix)])
}

func isDelim(c byte) bool     { return c == '/' || c == '?' || c == '#' || c == ':' }
func isNextDelim(c byte) bool { return c == '/' || c == '?' || c == '#' }

func validScheme(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
		case i > 0 && (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return s != ""
}

func isUnreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

func unhex(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// normalizePercent decodes percent-encoded unreserved characters and
// upper-cases the hex digits of every other encoding. In a path or
// authority (strict) it refuses an encoded "/", "\" or NUL and a literal
// "\".
func normalizePercent(s string, strict bool) (string, error) {
	if !strings.ContainsAny(s, "%\\") {
		return s, nil
	}
	const hexDigits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && strict {
			return "", invalid("a backslash in a URI path has no single meaning; use /")
		}
		if c != '%' {
			b.WriteByte(c)
			continue
		}
		if i+2 >= len(s) {
			return "", invalid("malformed percent-encoding at the end of %q", clip(s))
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", invalid("malformed percent-encoding %q", s[i:i+3])
		}
		v := hi<<4 | lo
		switch {
		case isUnreserved(v):
			b.WriteByte(v)
		case strict && (v == '/' || v == '\\' || v == 0):
			return "", invalid("an encoded %q in a URI path has no single meaning (upstreams disagree on whether it separates segments)", s[i:i+3])
		default:
			b.WriteByte('%')
			b.WriteByte(hexDigits[v>>4])
			b.WriteByte(hexDigits[v&15])
		}
		i += 2
	}
	return b.String(), nil
}

// lowerHost lower-cases the host of an authority ([userinfo@]host[:port]);
// userinfo keeps its case. Percent-encodings are already upper case and
// stay so.
func lowerHost(a string) string {
	if strings.IndexFunc(a, func(r rune) bool { return r >= 'A' && r <= 'Z' }) < 0 {
		return a
	}
	host := a
	prefix := ""
	if i := strings.LastIndexByte(a, '@'); i >= 0 {
		prefix, host = a[:i+1], a[i+1:]
	}
	var b strings.Builder
	b.WriteString(prefix)
	for i := 0; i < len(host); i++ {
		c := host[i]
		if c == '%' && i+2 < len(host) {
			b.WriteString(host[i : i+3])
			i += 2
			continue
		}
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		b.WriteByte(c)
	}
	return b.String()
}

// removeDotSegments is the algorithm of RFC 3986 §5.2.4.
func removeDotSegments(in string) string {
	if !strings.Contains(in, ".") {
		return in
	}
	out := make([]byte, 0, len(in))
	dropLast := func() {
		i := strings.LastIndexByte(string(out), '/')
		if i < 0 {
			i = 0
		}
		out = out[:i]
	}
	for in != "" {
		switch {
		case strings.HasPrefix(in, "../"):
			in = in[3:]
		case strings.HasPrefix(in, "./"):
			in = in[2:]
		case strings.HasPrefix(in, "/./"):
			in = in[2:]
		case in == "/.":
			in = "/"
		case strings.HasPrefix(in, "/../"):
			in = in[3:]
			dropLast()
		case in == "/..":
			in = "/"
			dropLast()
		case in == "." || in == "..":
			in = ""
		default:
			start := 0
			if in[0] == '/' {
				start = 1
			}
			end := strings.IndexByte(in[start:], '/')
			if end < 0 {
				end = len(in)
			} else {
				end += start
			}
			out = append(out, in[:end]...)
			in = in[end:]
		}
	}
	return string(out)
}

// clip shortens s for an error message.
func clip(s string) string {
	if len(s) <= 200 {
		return s
	}
	return s[:200] + "…"
}
