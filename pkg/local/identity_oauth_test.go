package local

import (
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// OAuth per principal against a real authorization server (npm
// oauth2-mock-server: authorization code + PKCE, refresh, revocation) and
// a real upstream MCP server that verifies each token's signature,
// issuer, audience and expiry and answers with its subject.
func TestUpstreamIdentityOAuth(t *testing.T) {
	as := testenv.StartAuthServer(t)
	up := testenv.NewJWTWhoServer(t, as.Issuer)
	catalogTok := as.Token(t, "catalog", url.Values{"resource": {up.URL + "/mcp"}})
	dir := t.TempDir()
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer %s\"}\n    auth: {mode: oauth, client_id: gateway-client}\n", up.URL+"/mcp", catalogTok)
	e := startGatewayWith(t, registry, identityKeys, map[string]string{"TOOL_RAG_VAULT_DB": filepath.Join(dir, "grants.db"), "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "vault.key")})

	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	bob := rawConnect(t, e.url, "k-bob", urlElicitation)
	link := testenv.ElicitationURL(alice.CallTool("up__whoami", nil))
	if !strings.HasPrefix(link, e.srv.URL+"/connect/") {
		t.Fatalf("alice's first call: no connect link")
	}

	// Bob's browser cannot finish alice's flow, even with alice's
	// authorization URL: the state is bound to the browser that started it.
	ab := testenv.NewUserAgent(t)
	authorize := ab.Connect(link, "k-alice")
	au, _ := url.Parse(authorize)
	q := au.Query()
	if !strings.HasPrefix(authorize, as.Issuer+"/authorize?") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("resource") != up.URL+"/mcp" || q.Get("client_id") != "gateway-client" || q.Get("redirect_uri") != e.srv.URL+"/connect-callback" || q.Get("state") == "" {
		t.Fatalf("authorization request: %s", authorize)
	}
	if code, body := testenv.NewUserAgent(t).Approve(authorize, "bob"); code != http.StatusForbidden || !strings.Contains(body, "another browser") {
		t.Fatalf("alice's flow finished in bob's browser: %d %s", code, body)
	}
	if code, body := ab.Approve(authorize, "alice"); code != http.StatusOK || !strings.Contains(body, "Connected") {
		t.Fatalf("alice's callback: %d %s", code, body)
	}
	if code, body := ab.Approve(authorize, "alice"); code == http.StatusOK {
		t.Fatalf("a replayed state was accepted: %s", body)
	}
	if got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil)); got != "sub=alice" {
		t.Fatalf("alice after connecting: %q", got)
	}

	// Bob connects with short-lived tokens: his next call refreshes first.
	as.SetTTL(t, 30)
	link = testenv.ElicitationURL(bob.CallTool("up__whoami", nil))
	bb := testenv.NewUserAgent(t)
	authorize = bb.Connect(link, "k-bob")
	if code, body := bb.Approve(authorize, "bob"); code != http.StatusOK {
		t.Fatalf("bob's callback: %d %s", code, body)
	}
	before := as.Stats(t).Grants["refresh_token"]
	for range 2 {
		if got, _ := testenv.RawResultText(bob.CallTool("up__whoami", nil)); got != "sub=bob" {
			t.Fatalf("bob: %q", got)
		}
		if got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil)); got != "sub=alice" {
			t.Fatalf("alice: %q", got)
		}
	}
	if n := as.Stats(t).Grants["refresh_token"] - before; n < 1 {
		t.Errorf("bob's 30 s token was not refreshed (%d refresh grants)", n)
	}
	as.SetTTL(t, 3600)

	// The upstream refuses alice (HTTP 401): her grant is dropped and she
	// is asked again.
	up.Deny("alice", true)
	if testenv.ElicitationURL(alice.CallTool("up__whoami", nil)) == "" {
		t.Error("alice after a 401 was not asked to connect again")
	}
	up.Deny("alice", false)

	// Revoking bob's connection revokes his tokens at the server (RFC 7009).
	rev := as.Stats(t).Revocations
	if code, out := restJSON(t, http.MethodDelete, e.srv.URL+"/tool-rag/connections/up", "k-bob", ""); code != 200 || out["revoked"] != true {
		t.Fatalf("bob revoking: %d %v", code, out)
	}
	if n := as.Stats(t).Revocations - rev; n < 1 {
		t.Errorf("revocation requests: %d", n)
	}
	if testenv.ElicitationURL(bob.CallTool("up__whoami", nil)) == "" {
		t.Error("bob after revoking was not asked to connect again")
	}

	// An admin revoking alice's grant from the console revokes her tokens
	// at the server too.
	link = testenv.ElicitationURL(alice.CallTool("up__whoami", nil))
	ab = testenv.NewUserAgent(t)
	if code, body := ab.Approve(ab.Connect(link, "k-alice"), "alice"); code != http.StatusOK {
		t.Fatalf("alice's second callback: %d %s", code, body)
	}
	rev = as.Stats(t).Revocations
	admin := e.srv.URL + "/tool-rag/admin/connections?server=up&principal=" + url.QueryEscape(principalOfKey("alice", "k-alice"))
	if code, out := restJSON(t, http.MethodDelete, admin, "k-root", ""); code != 200 || out["revoked"] != float64(1) {
		t.Fatalf("the admin revoking alice: %d %v", code, out)
	}
	if n := as.Stats(t).Revocations - rev; n < 1 {
		t.Errorf("revocation requests after the admin's revoke: %d", n)
	}
	if testenv.ElicitationURL(alice.CallTool("up__whoami", nil)) == "" {
		t.Error("alice after the admin revoked her grant was not asked to connect again")
	}
	if calls := up.Calls(); calls["catalog"] != 0 {
		t.Errorf("a caller's call went out with the catalog credential: %v", calls)
	}
}
