package local

import (
	"context"
	"fmt"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// userAgent is a user's browser: a cookie jar, redirects followed by hand
// so the test can act as the user at the authorization server.
type userAgent struct {
	t *testing.T
	c *http.Client
}

func newUserAgent(t *testing.T) *userAgent {
	jar, _ := cookiejar.New(nil)
	return &userAgent{t: t, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (b *userAgent) do(req *http.Request) (int, string, string) {
	b.t.Helper()
	resp, err := b.c.Do(req)
	if err != nil {
		b.t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := new(strings.Builder)
	_, _ = fmt.Fprint(buf, readAll(resp))
	return resp.StatusCode, resp.Header.Get("Location"), buf.String()
}

func readAll(resp *http.Response) string {
	var sb strings.Builder
	b := make([]byte, 4096)
	for {
		n, err := resp.Body.Read(b)
		sb.Write(b[:n])
		if err != nil {
			return sb.String()
		}
	}
}

// connect completes a connect link as user: signs in with key, approves
// at the authorization server as user, follows the redirect back.
// It returns the final status and page.
func (b *userAgent) connect(link, key, user string) (authorize string, status int, page string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, link, strings.NewReader(url.Values{"key": {key}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, loc, body := b.do(req)
	if code != http.StatusSeeOther {
		return "", code, body
	}
	return loc, 0, ""
}

func (b *userAgent) approve(authorize, user string) (int, string) {
	b.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, authorize+"&x_user="+url.QueryEscape(user), nil)
	code, loc, body := b.do(req)
	if code != http.StatusFound && code != http.StatusSeeOther {
		b.t.Fatalf("authorization server: %d %s", code, body)
	}
	req, _ = http.NewRequest(http.MethodGet, loc, nil)
	code, _, body = b.do(req)
	return code, body
}

// OAuth per principal against a real authorization server (npm
// oauth2-mock-server: authorization code + PKCE, refresh, revocation) and
// a real upstream MCP server that verifies each token's signature,
// issuer, audience and expiry and answers with its subject.
func TestUpstreamIdentityOAuth(t *testing.T) {
	as := testenv.StartAuthServer(t)
	up := &whoUpstream{}
	var verifier *oidc.IDTokenVerifier
	var once sync.Once
	deny := map[string]bool{}
	var denyMu sync.Mutex
	up = newWhoUpstream(t, nil)
	up.issuer = as.Issuer
	up.check = func(tok string) (string, bool) {
		once.Do(func() {
			verifier = oidc.NewVerifier(as.Issuer, oidc.NewRemoteKeySet(context.Background(), as.Issuer+"/jwks"),
				&oidc.Config{ClientID: up.URL + "/mcp"})
		})
		idt, err := verifier.Verify(context.Background(), tok)
		if err != nil {
			return "", false
		}
		denyMu.Lock()
		defer denyMu.Unlock()
		return idt.Subject, !deny[idt.Subject]
	}
	catalogTok := as.Token(t, "catalog", url.Values{"resource": {up.URL + "/mcp"}})
	dir := t.TempDir()
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer %s\"}\n    auth: {mode: oauth, client_id: gateway-client}\n", up.URL+"/mcp", catalogTok)
	e := startGatewayWith(t, registry, identityKeys, map[string]string{"TOOL_RAG_VAULT_DB": filepath.Join(dir, "grants.db"), "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "vault.key")})

	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	bob := rawConnect(t, e.url, "k-bob", urlElicitation)
	link := elicitationURL(alice.callTool("up__whoami", nil))
	if !strings.HasPrefix(link, e.srv.URL+"/connect/") {
		t.Fatalf("alice's first call: no connect link")
	}

	// Bob's userAgent cannot finish alice's flow, even with alice's
	// authorization URL: the state is bound to the userAgent that started it.
	ab := newUserAgent(t)
	authorize, status, page := ab.connect(link, "k-alice", "alice")
	if authorize == "" {
		t.Fatalf("alice's link: %d %s", status, page)
	}
	au, _ := url.Parse(authorize)
	q := au.Query()
	if !strings.HasPrefix(authorize, as.Issuer+"/authorize?") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("resource") != up.URL+"/mcp" || q.Get("client_id") != "gateway-client" || q.Get("redirect_uri") != e.srv.URL+"/connect-callback" || q.Get("state") == "" {
		t.Fatalf("authorization request: %s", authorize)
	}
	if code, body := newUserAgent(t).approve(authorize, "bob"); code != http.StatusForbidden || !strings.Contains(body, "another browser") {
		t.Fatalf("alice's flow finished in bob's browser: %d %s", code, body)
	}
	if code, body := ab.approve(authorize, "alice"); code != http.StatusOK || !strings.Contains(body, "Connected") {
		t.Fatalf("alice's callback: %d %s", code, body)
	}
	if code, body := ab.approve(authorize, "alice"); code == http.StatusOK {
		t.Fatalf("a replayed state was accepted: %s", body)
	}
	if got, _ := resultTextOf(alice.callTool("up__whoami", nil)); got != "sub=alice" {
		t.Fatalf("alice after connecting: %q", got)
	}

	// Bob connects with short-lived tokens: his next call refreshes first.
	as.SetTTL(t, 30)
	link = elicitationURL(bob.callTool("up__whoami", nil))
	bb := newUserAgent(t)
	authorize, status, page = bb.connect(link, "k-bob", "bob")
	if authorize == "" {
		t.Fatalf("bob's link: %d %s", status, page)
	}
	if code, body := bb.approve(authorize, "bob"); code != http.StatusOK {
		t.Fatalf("bob's callback: %d %s", code, body)
	}
	before := as.Stats(t).Grants["refresh_token"]
	for range 2 {
		if got, _ := resultTextOf(bob.callTool("up__whoami", nil)); got != "sub=bob" {
			t.Fatalf("bob: %q", got)
		}
		if got, _ := resultTextOf(alice.callTool("up__whoami", nil)); got != "sub=alice" {
			t.Fatalf("alice: %q", got)
		}
	}
	if n := as.Stats(t).Grants["refresh_token"] - before; n < 1 {
		t.Errorf("bob's 30 s token was not refreshed (%d refresh grants)", n)
	}
	as.SetTTL(t, 3600)

	// The upstream refuses alice (HTTP 401): her grant is dropped and she
	// is asked again.
	denyMu.Lock()
	deny["alice"] = true
	denyMu.Unlock()
	if elicitationURL(alice.callTool("up__whoami", nil)) == "" {
		t.Error("alice after a 401 was not asked to connect again")
	}
	denyMu.Lock()
	deny["alice"] = false
	denyMu.Unlock()

	// Revoking bob's connection revokes his tokens at the server (RFC 7009).
	rev := as.Stats(t).Revocations
	if code, out := restJSON(t, http.MethodDelete, e.srv.URL+"/tool-rag/connections/up", "k-bob"); code != 200 || out["revoked"] != true {
		t.Fatalf("bob revoking: %d %v", code, out)
	}
	if n := as.Stats(t).Revocations - rev; n < 1 {
		t.Errorf("revocation requests: %d", n)
	}
	if elicitationURL(bob.callTool("up__whoami", nil)) == "" {
		t.Error("bob after revoking was not asked to connect again")
	}

	// An admin revoking alice's grant from the console revokes her tokens
	// at the server too.
	link = elicitationURL(alice.callTool("up__whoami", nil))
	ab = newUserAgent(t)
	if authorize, status, page = ab.connect(link, "k-alice", "alice"); authorize == "" {
		t.Fatalf("alice reconnecting: %d %s", status, page)
	}
	if code, body := ab.approve(authorize, "alice"); code != http.StatusOK {
		t.Fatalf("alice's second callback: %d %s", code, body)
	}
	rev = as.Stats(t).Revocations
	admin := e.srv.URL + "/tool-rag/admin/connections?server=up&principal=" + url.QueryEscape(principalOfKey("alice", "k-alice"))
	if code, out := restJSON(t, http.MethodDelete, admin, "k-root"); code != 200 || out["revoked"] != float64(1) {
		t.Fatalf("the admin revoking alice: %d %v", code, out)
	}
	if n := as.Stats(t).Revocations - rev; n < 1 {
		t.Errorf("revocation requests after the admin's revoke: %d", n)
	}
	if elicitationURL(alice.callTool("up__whoami", nil)) == "" {
		t.Error("alice after the admin revoked her grant was not asked to connect again")
	}
	if up.calls["catalog"] != 0 {
		t.Errorf("a caller's call went out with the catalog credential: %v", up.calls)
	}
}
