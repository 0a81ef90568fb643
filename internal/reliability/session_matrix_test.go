package reliability

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/session"
)

// Two more surfaces of the policy matrix (issue #11): a legacy session
// answers only the key that opened it, and /tool-rag/health tells each key
// only what it may know.
func init() {
	surfaces = append(surfaces,
		surface{name: "another key's session (POST, GET, DELETE)", check: func(t *testing.T, m *matrix, k keyCase) {
			owner := "sekret-admin-a1b2"
			if k.admin {
				owner = "sekret-full-9f8e"
			}
			sid := openLegacySession(t, m.g.url, owner)
			unknown := session.NewID()
			call := mcpBody("tools/call", `{"name":"find_tools","arguments":{"query":"echo"}}`)
			for _, method := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
				body := ""
				if method == http.MethodPost {
					body = call
				}
				code, out := sessionDo(t, method, m.g.url, k.secret, sid, body)
				ucode, uout := sessionDo(t, method, m.g.url, k.secret, unknown, body)
				if code != http.StatusNotFound || code != ucode || out != uout {
					t.Errorf("%s with another key's session: %d %q; unknown session: %d %q", method, code, out, ucode, uout)
				}
			}
			if code, out := sessionDo(t, http.MethodPost, m.g.url, owner, sid, call); code != 200 || !strings.Contains(out, "echo__") {
				t.Errorf("the owner's session after the attempts: %d %s", code, out)
			}
		}, raw: func(m *matrix) (string, string, string) {
			return "DELETE", "/mcp", ""
		}},
		surface{name: "REST health", check: func(t *testing.T, m *matrix, k keyCase) {
			code, _, body := httpDo(t, m.http, "GET", m.g.base+"/tool-rag/health", k.secret, "", nil)
			if code != 200 {
				t.Fatalf("health: %d %s", code, body)
			}
			var out map[string]any
			if err := json.Unmarshal([]byte(body), &out); err != nil {
				t.Fatal(err)
			}
			if k.admin {
				if _, ok := out["last_sync"]; !ok {
					t.Errorf("admin health lacks the details: %s", body)
				}
				return
			}
			// The servers each key's rules name (written out by hand): a rule
			// of empty lists still names its server.
			granted, known := map[string]float64{"full server grant": 1, "prefix grants": 2, "no grant": 0, "hashed secret": 1,
				"tools only": 1, "empty lists": 1, "star": 1, "ev dynamic": 1,
				"oauth full scope": 1, "oauth prefix scope": 2, "oauth group": 1, "oauth cognito:groups": 1}[k.name]
			if !known {
				t.Fatalf("key kind %q: write down how many servers it is granted", k.name)
			}
			srv, _ := out["servers"].(map[string]any)
			if len(out) != 2 || srv["granted"] != granted || srv["up"] != granted || srv["down"] != 0.0 {
				t.Errorf("health for %s: %s; want only status and servers {granted: %v, up: %v, down: 0}", k.name, body, granted, granted)
			}
		}, raw: func(m *matrix) (string, string, string) {
			return "GET", "/tool-rag/health", ""
		}},
	)
}
