package redact

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"regexp"
	"strings"
)

// Mark replaces a removed credential.
const Mark = "[redacted]"

// tokenParams are query parameter (and key=value) names whose values are
// credentials. A name matches when it ends with one of them, in any case
// (x_api_key, client-secret, PGPASSWORD): a few harmless values are
// removed too, which is the safe side.
var tokenParams = []string{"token", "access_token", "refresh_token", "id_token", "key", "api_key", "apikey",
	"secret", "client_secret", "password", "passwd", "pwd", "sig", "signature", "authorization",
	"credential", "credentials", "x-amz-signature", "x-amz-credential", "x-amz-security-token"}

// queryOnlyParams are credentials only as URL query parameters.
var queryOnlyParams = []string{"code"}

func isTokenParam(name string) bool {
	return matchParam(name, tokenParams)
}

func matchParam(name string, list []string) bool {
	n := strings.ToLower(name)
	for _, t := range list {
		if strings.HasSuffix(n, t) {
			return true
		}
	}
	return false
}

// URL returns raw with its credentials removed: the userinfo (user and
// password) and the values of token-like query parameters (token, key,
// secret, password, sig, signature, access_token, api_key, ...). Text that
// does not parse as a URL goes through Text's key=value rule only.
func URL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return redactPairs(raw)
	}
	changed := false
	if u.User != nil {
		u.User = url.User(Mark)
		changed = true
	}
	if u.RawQuery != "" {
		q := strings.Split(u.RawQuery, "&")
		for i, kv := range q {
			name, _, hasValue := strings.Cut(kv, "=")
			if unescaped, err := url.QueryUnescape(name); err == nil {
				name = unescaped
			}
			if hasValue && (isTokenParam(name) || matchParam(name, queryOnlyParams)) {
				q[i] = kv[:strings.IndexByte(kv, '=')+1] + Mark
				changed = true
			}
		}
		u.RawQuery = strings.Join(q, "&")
	}
	if u.Fragment != "" && strings.Contains(u.Fragment, "=") {
		// OAuth implicit flows put tokens in the fragment.
		if r := redactPairs(u.Fragment); r != u.Fragment {
			u.Fragment, u.RawFragment = r, ""
			changed = true
		}
	}
	if !changed {
		return raw
	}
	return strings.Replace(u.String(), url.PathEscape(Mark), Mark, -1)
}

var (
	urlRE       = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.\-]*://[^\s"'<>` + "`" + `]+`)
	bearerRE    = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}`)
	sessionIDRE = regexp.MustCompile(`mcp-session-[0-9a-fA-F\-]{32,36}`)
)

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// redactPairs replaces the value of name=value and name: value pairs whose
// name is token-like (see tokenParams). A value runs to the next space,
// '&', ',', ';' or quote, or is one quoted string.
func redactPairs(s string) string {
	if !strings.ContainsAny(s, "=:") || !mentionsToken(s) {
		return s
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); i++ {
		if s[i] != '=' && s[i] != ':' {
			continue
		}
		start := i
		for start > 0 && isNameByte(s[start-1]) {
			start--
		}
		if start == i || !isTokenParam(s[start:i]) {
			continue
		}
		v := i + 1
		for v < len(s) && s[v] == ' ' {
			v++
		}
		end := v
		switch {
		case end < len(s) && (s[end] == '"' || s[end] == '\''):
			if j := strings.IndexByte(s[end+1:], s[end]); j >= 0 {
				end += j + 2
			} else {
				end = len(s)
			}
		default:
			for end < len(s) && !strings.ContainsRune(" \t\n&,;\"'", rune(s[end])) {
				end++
			}
		}
		val := s[v:end]
		if end == v || val == Mark || strings.EqualFold(val, "bearer") || strings.EqualFold(val, "basic") {
			continue
		}
		b.WriteString(s[last:v])
		b.WriteString(Mark)
		last, i = end, end-1
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// mentionsToken reports whether s contains a token-like name anywhere
// (a cheap test before the scan).
func mentionsToken(s string) bool {
	l := strings.ToLower(s)
	for _, t := range tokenParams {
		if strings.Contains(l, t) {
			return true
		}
	}
	return false
}

// Text returns s with credentials removed wherever they appear in free
// text (an error message, an upstream's stderr line, a log attribute):
// every URL as URL does, token-like name=value pairs, Bearer/Basic
// credentials, and MCP session ids (replaced by SessionRef).
func Text(s string) string {
	if len(s) < 4 {
		return s
	}
	if strings.Contains(s, "://") {
		s = urlRE.ReplaceAllStringFunc(s, URL)
	}
	if strings.Contains(s, " ") && (strings.Contains(s, "earer") || strings.Contains(s, "asic") || strings.Contains(s, "EARER") || strings.Contains(s, "ASIC")) {
		s = bearerRE.ReplaceAllStringFunc(s, func(m string) string {
			scheme, _, _ := strings.Cut(m, " ")
			return scheme + " " + Mark
		})
	}
	s = redactPairs(s)
	if strings.Contains(s, "mcp-session-") {
		s = sessionIDRE.ReplaceAllStringFunc(s, SessionRef)
	}
	return s
}

// SessionRef is what logs and error messages say instead of a session id:
// a session id is a bearer credential of its session (with its owner's
// key), so it is never written out. The short hash lets an operator
// correlate lines.
func SessionRef(id string) string {
	if id == "" {
		return "(none)"
	}
	sum := sha256.Sum256([]byte(id))
	return "s-" + hex.EncodeToString(sum[:4])
}
