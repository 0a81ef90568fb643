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

// connectOIDC completes a connect link for key as user at the provider.
func connectOIDC(t *testing.T, e *env, link, key, user string) string {
	t.Helper()
	b := testenv.NewUserAgent(t)
	authorize := b.Connect(link, key)
	if code, body := b.ApproveAt(authorize, user, e.srv.URL+"/connect-callback"); code != http.StatusOK || !strings.Contains(body, "Connected") {
		t.Fatalf("%s's callback: %d %s", user, code, body)
	}
	return authorize
}

func oidcGateway(t *testing.T, up *testenv.WhoServer, p *testenv.OIDCProvider, auth, keys string) *env {
	t.Helper()
	catalogTok := p.SignToken(t, map[string]any{"sub": "catalog", "aud": up.URL + "/mcp"})
	dir := t.TempDir()
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer %s\"}\n    auth: %s\n", up.URL+"/mcp", catalogTok, auth)
	return startGatewayWith(t, registry, keys, map[string]string{"TOOL_RAG_VAULT_DB": filepath.Join(dir, "grants.db"), "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "vault.key")})
}

// OAuth with no pre-registered client against a real authorization server
// (npm oidc-provider): the gateway discovers it from the upstream's 401 and
// RFC 9728 metadata, registers itself (RFC 7591) once, and each user
// authorises with authorization code + PKCE S256 and the resource
// indicator; the upstream verifies the JWT access tokens and sees each
// user as themselves.
func TestUpstreamIdentityDynamicRegistration(t *testing.T) {
	p := testenv.StartOIDCProvider(t)
	up := testenv.NewJWTWhoServer(t, p.Issuer)
	e := oidcGateway(t, up, p, "{mode: oauth, scopes: [mcp]}", identityKeys)

	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	bob := rawConnect(t, e.url, "k-bob", urlElicitation)
	link := testenv.ElicitationURL(alice.CallTool("up__whoami", nil))
	if !strings.HasPrefix(link, e.srv.URL+"/connect/") {
		t.Fatalf("alice's first call: no connect link")
	}
	authorize := connectOIDC(t, e, link, "k-alice", "alice")
	au, _ := url.Parse(authorize)
	q := au.Query()
	if !strings.HasPrefix(authorize, p.Issuer+"/auth?") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("resource") != up.URL+"/mcp" || q.Get("client_id") == "" || q.Get("redirect_uri") != e.srv.URL+"/connect-callback" {
		t.Fatalf("authorization request: %s", authorize)
	}
	if got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil)); got != "sub=alice" {
		t.Fatalf("alice after connecting: %q", got)
	}

	link = testenv.ElicitationURL(bob.CallTool("up__whoami", nil))
	if link == "" {
		t.Fatal("bob was not asked to connect")
	}
	bq, _ := url.Parse(connectOIDC(t, e, link, "k-bob", "bob"))
	if bq.Query().Get("client_id") != q.Get("client_id") {
		t.Errorf("the registered client was not reused: %s then %s", q.Get("client_id"), bq.Query().Get("client_id"))
	}
	for _, c := range []struct {
		s    *testenv.RawSession
		want string
	}{{alice, "sub=alice"}, {bob, "sub=bob"}} {
		if got, _ := testenv.RawResultText(c.s.CallTool("up__whoami", nil)); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	st := p.OIDCStats(t)
	if st.Registrations != 1 || st.Grants["authorization_code"] != 2 {
		t.Errorf("provider saw %d registrations and %d code grants, want 1 and 2", st.Registrations, st.Grants["authorization_code"])
	}
	if calls := up.Calls(); calls["catalog"] != 0 {
		t.Errorf("a caller's call went out with the catalog credential: %v", calls)
	}
}

// A refresh the authorization server refuses (the user's grant ended
// there) drops the gateway's grant: the next call is not sent upstream but
// asks the user again (-32042 with a connect link), and connecting again
// works.
func TestUpstreamIdentityFailedRefresh(t *testing.T) {
	p := testenv.StartOIDCProvider(t)
	up := testenv.NewJWTWhoServer(t, p.Issuer)
	e := oidcGateway(t, up, p, "{mode: oauth, scopes: [mcp]}", identityKeys)
	p.SetTTL(t, 30) // inside the gateway's refresh margin: every call refreshes first

	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	connectOIDC(t, e, testenv.ElicitationURL(alice.CallTool("up__whoami", nil)), "k-alice", "alice")
	if got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil)); got != "sub=alice" {
		t.Fatalf("alice after connecting: %q", got)
	}
	if n := p.OIDCStats(t).Grants["refresh_token"]; n < 1 {
		t.Fatalf("the 30 s token was not refreshed (%d refresh grants)", n)
	}
	if n := p.EndGrants(t, "alice"); n < 1 {
		t.Fatalf("no grant of alice's at the provider to end")
	}
	before := up.Calls()["alice"]
	refreshes := p.OIDCStats(t).Grants["refresh_token"]
	msg := alice.CallTool("up__whoami", nil)
	link := testenv.ElicitationURL(msg)
	if !strings.HasPrefix(link, e.srv.URL+"/connect/") {
		t.Fatalf("after a failed refresh alice was not asked to connect again: %v", msg)
	}
	if p.OIDCStats(t).Grants["refresh_token"] == refreshes {
		t.Error("the gateway did not try to refresh")
	}
	if up.Calls()["alice"] != before {
		t.Error("the call went upstream after the refresh failed")
	}
	// The grant is gone: the next call asks again without a refresh.
	refreshes = p.OIDCStats(t).Grants["refresh_token"]
	if testenv.ElicitationURL(alice.CallTool("up__whoami", nil)) == "" {
		t.Error("the second call after the failed refresh was not asked to connect")
	}
	if n := p.OIDCStats(t).Grants["refresh_token"] - refreshes; n != 0 {
		t.Errorf("the dropped grant was refreshed again (%d)", n)
	}
	p.SetTTL(t, 3600)
	connectOIDC(t, e, link, "k-alice", "alice")
	if got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil)); got != "sub=alice" {
		t.Fatalf("alice after connecting again: %q", got)
	}
}

// token_exchange: a caller signed in to the gateway with an OAuth token
// reaches the upstream with a token the authorization server (npm
// oidc-provider with an RFC 8693 grant) issued for the upstream's audience
// in exchange for the caller's; the upstream sees the caller's subject and
// never the caller's own token. An API key caller is refused.
func TestUpstreamIdentityTokenExchange(t *testing.T) {
	p := testenv.StartOIDCProvider(t)
	up := testenv.NewJWTWhoServer(t, p.Issuer)
	const gwAud = "https://gateway.test/mcp"
	keys := identityKeys + fmt.Sprintf("oauth:\n  issuer: %q\n  audience: %s\n  grants:\n    - match: {scope: gw}\n      servers: {up: {tool_prefixes: [\"*\"]}}\n", p.Issuer, gwAud)
	e := oidcGateway(t, up, p, fmt.Sprintf("{mode: token_exchange, client_id: %s, client_secret: %s, token_endpoint: %q}",
		testenv.ExchangeClientID, testenv.ExchangeClientSecret, p.Issuer+"/token"), keys)

	inbound := p.SignToken(t, map[string]any{"sub": "dana", "aud": gwAud, "scope": "gw"})
	if _, ok := up.Check(inbound); ok {
		t.Fatal("the upstream accepts a token issued for the gateway")
	}
	dana := rawConnect(t, e.url, inbound, urlElicitation)
	for range 2 {
		if got, isErr := testenv.RawResultText(dana.CallTool("up__whoami", nil)); got != "sub=dana" || isErr {
			t.Fatalf("dana: %q", got)
		}
	}
	if n := p.OIDCStats(t).Grants["urn:ietf:params:oauth:grant-type:token-exchange"]; n != 1 {
		t.Errorf("token exchanges: %d, want 1 (the exchanged token is cached)", n)
	}
	eve := rawConnect(t, e.url, p.SignToken(t, map[string]any{"sub": "eve", "aud": gwAud, "scope": "gw"}), urlElicitation)
	if got, _ := testenv.RawResultText(eve.CallTool("up__whoami", nil)); got != "sub=eve" {
		t.Errorf("eve: %q", got)
	}
	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	if got, isErr := testenv.RawResultText(alice.CallTool("up__whoami", nil)); !isErr || strings.Contains(got, "sub=") {
		t.Errorf("an API key caller reached the token_exchange server: %q", got)
	}
	if calls := up.Calls(); calls["catalog"] != 0 {
		t.Errorf("a caller's call went out with the catalog credential: %v", calls)
	}
}
