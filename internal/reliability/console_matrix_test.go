package reliability

import (
	"strings"
	"testing"
)

// The console's admin endpoints are one more surface of the policy matrix:
// an admin key reads them, every other key gets 403 and none of their data.
func init() {
	surfaces = append(surfaces, surface{name: "console admin endpoints", check: func(t *testing.T, m *matrix, k keyCase) {
		for _, r := range []struct{ method, path, body string }{
			{"GET", "/tool-rag/admin/servers", ""},
			{"GET", "/tool-rag/admin/tools?limit=500", ""},
			{"GET", "/tool-rag/admin/tools/echo__echo", ""},
			{"GET", "/tool-rag/admin/keys", ""},
			{"GET", "/tool-rag/admin/usage", ""},
			{"POST", "/tool-rag/admin/search", `{"queries":["reverse text"],"key_id":"full"}`},
		} {
			code, _, out := httpDo(t, m.http, r.method, m.g.base+r.path, k.secret, r.body, nil)
			if k.admin {
				if code != 200 {
					t.Errorf("admin %s %s: %d %s", r.method, r.path, code, out)
				}
				if strings.Contains(out, "secret_hash") || strings.Contains(out, "a60e320e29da17914e600c5b39a6c8818926a1a1747a613a224766ae13d284ee") {
					t.Errorf("admin %s %s shows a key hash: %s", r.method, r.path, out)
				}
				continue
			}
			if code != 403 {
				t.Errorf("%s %s %s: %d, want 403", k.name, r.method, r.path, code)
			}
			for _, leak := range []string{"echo__", "other__", `"prefix"`, "nogrant", "streamable_http", "stdio"} {
				if strings.Contains(out, leak) {
					t.Errorf("%s %s %s leaks %q: %s", k.name, r.method, r.path, leak, out)
				}
			}
		}
	}, raw: func(m *matrix) (string, string, string) { return "GET", "/tool-rag/admin/servers", "" }})
}
