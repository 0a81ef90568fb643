package reliability

import (
	"context"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

const matrixAudience = "https://gateway.matrix.test/mcp"

// matrixOAuth maps claims to the same grants as the matrix's API keys.
const matrixOAuth = `oauth:
  issuer: %q
  audience: ` + matrixAudience + `
  grants:
    - match: {scope: m.admin}
      admin: true
      servers: {echo: {}, other: {}}
    - match: {scope: m.full}
      servers: {echo: {}}
    - match: {scope: m.prefix}
      servers:
        echo: {tool_prefixes: ["ec", "add"], uri_prefixes: ["echo://items/"], prompt_prefixes: ["greet"]}
        other: {tool_prefixes: ["rev"], uri_prefixes: ["echo://info"], prompt_prefixes: ["nomatch"]}
    - match: {group: g.other}
      servers: {other: {}}
`

// TestPolicyMatrixOAuth re-runs the policy matrix with OAuth principals:
// tokens from a real authorization server whose claims map to the same
// grants as the API keys must see and use exactly what those keys do, on
// every surface; rejected tokens get a 401 with the resource metadata.
func TestPolicyMatrixOAuth(t *testing.T) {
	as := testenv.StartAuthServer(t)
	reg := "servers:\n" + stdioEntry(t, "echo", "") + stdioEntry(t, "other", "")
	keys := matrixKeys + strings.Replace(matrixOAuth, "%q", `"`+as.Issuer+`"`, 1)
	g := startGateway(t, gwOpts{Registry: reg, Keys: keys, Env: map[string]string{
		"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_URL": greedyPlanner(t), "TOOL_RAG_PLANNER_MODEL": "matrix",
	}})
	rec := newRecorder()
	m := &matrix{g: g, rec: rec, http: &http.Client{Transport: rec}, clients: map[string]*client.Client{}, legacy: map[string]*client.Client{}}

	tok := func(client string, kv ...string) string {
		f := url.Values{"resource": {matrixAudience}}
		for i := 0; i+1 < len(kv); i += 2 {
			f.Set(kv[i], kv[i+1])
		}
		return as.Token(t, client, f)
	}
	byName := map[string]keyCase{}
	for _, k := range keyCases {
		byName[k.name] = k
	}
	like := func(name, as, token string) keyCase {
		k := byName[as]
		k.name, k.secret = name, token
		return k
	}
	cases := []keyCase{
		like("oauth admin scope", "admin", tok("agent-admin", "scope", "m.admin")),
		like("oauth full scope", "full server grant", tok("agent-full", "scope", "m.full")),
		like("oauth prefix scope", "prefix grants", tok("agent-prefix", "scope", "m.prefix")),
		like("oauth group", "hashed secret", tok("agent-group", "x_groups", "g.other")),
		// Without groups_claim, cognito:groups names groups as well.
		like("oauth cognito:groups", "hashed secret", as.Sign(t, "k1", map[string]any{"aud": matrixAudience, "sub": "agent-cognito", "cognito:groups": "g.other"})),
		{name: "oauth expired", secret: tok("agent-full", "scope", "m.full", "x_exp", "-3600")},
		{name: "oauth wrong audience", secret: tok("agent-full", "scope", "m.full", "resource", "https://elsewhere.test/mcp")},
		{name: "oauth wrong issuer", secret: tok("agent-full", "scope", "m.full", "x_iss", "https://evil.test")},
	}
	// Without server-everything here, its surfaces check that the OAuth
	// principals see nothing of it.
	m.run(t, cases, func(challenge string) bool {
		return strings.Contains(challenge, `error="invalid_token"`) &&
			strings.Contains(challenge, `resource_metadata="https://gateway.matrix.test/.well-known/oauth-protected-resource/mcp"`)
	})

	t.Run("a grant removed ends the open stream of its principals", func(t *testing.T) {
		full := byName["full server grant"]
		full.secret = tok("agent-stream", "scope", "m.full")
		sid := openLegacySession(t, g.url, full.secret)
		ended := openStream(t, g.url, full.secret, sid)
		writeFile(t, filepath.Join(g.dir, "keys.yaml"), matrixKeys+strings.Replace(
			strings.Replace(matrixOAuth, "    - match: {scope: m.full}\n      servers: {echo: {}}\n", "", 1), "%q", `"`+as.Issuer+`"`, 1))
		if !g.g.ReloadConfig(context.Background()) {
			t.Fatal("keys.yaml not reloaded")
		}
		select {
		case <-ended:
		case <-time.After(5 * time.Second):
			t.Error("the stream of a principal whose grant was removed is still open 5 s after the reload")
		}
		if code, _ := sessionDo(t, "POST", g.url, full.secret, sid, mcpBody("ping", "{}")); code != http.StatusForbidden {
			t.Errorf("after its grant was removed the token got %d, want 403", code)
		}
	})

	t.Run("audit lines name the principal, never the token", func(t *testing.T) {
		logs := g.logs.String()
		for _, id := range []string{"oauth:sub:agent-admin", "oauth:sub:agent-full", "oauth:sub:agent-prefix", "oauth:sub:agent-group"} {
			if !strings.Contains(logs, id) {
				t.Errorf("no log line names %s", id)
			}
		}
		places := map[string]string{"logs": logs, "responses": strings.Join(m.rec.all(), "\n")}
		for _, k := range cases {
			sig := k.secret[strings.LastIndex(k.secret, ".")+1:]
			for where, content := range places {
				if strings.Contains(content, sig) {
					t.Errorf("the token of %s appears in %s", k.name, where)
				}
			}
		}
	})
}
