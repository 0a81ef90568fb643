package reliability

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// The second red team's authentication findings (issue "Security, second
// round"): each test failed on the code before its fix.

const rt2Audience = "https://gateway.rt2.test/mcp"

// rt2Keys are the API keys of these tests.
const rt2Keys = `keys:
  - id: rt2-admin
    secret: "rt2-admin-secret-0c1d"
    admin: true
    servers: {echo: {}}
  - id: rt2-agent
    secret: "rt2-agent-secret-7a2b"
    servers: {echo: {}}
  - id: rt2-fresh
    secret: "rt2-fresh-secret-5e6f"
    servers: {echo: {}}
`

func rt2OAuth(issuer, grants string) string {
	return fmt.Sprintf("oauth:\n  issuer: %q\n  audience: %s\n%s", issuer, rt2Audience, grants)
}

// whoami returns the status and body of GET /tool-rag/admin/whoami.
func (g *gateway) whoami(t *testing.T, bearer string) (int, string) {
	t.Helper()
	code, _, body := httpDo(t, nil, "GET", g.base+"/tool-rag/admin/whoami", bearer, "", nil)
	return code, body
}

// openStream opens the GET stream of a legacy session; the returned
// channel is closed when the gateway ends it.
func openStream(t *testing.T, url, key, sid string) <-chan struct{} {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	for k, v := range legacyHdr {
		req.Header.Set(k, v)
	}
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Mcp-Session-Id", sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET stream: %v %v", err, resp)
	}
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
		}
	}()
	t.Cleanup(func() { resp.Body.Close() })
	return ended
}

// TestRedTeam2GroupsClaimReplaces (finding 1): with groups_claim set, only
// that claim names groups; "groups" and "cognito:groups" no longer do.
func TestRedTeam2GroupsClaimReplaces(t *testing.T) {
	as := testenv.StartAuthServer(t)
	keys := rt2Keys + rt2OAuth(as.Issuer, `  groups_claim: roles
  grants:
    - match: {group: platform-admins}
      admin: true
      servers: {echo: {}}
`)
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys, NoSync: true})
	sign := func(claims map[string]any) string {
		claims["aud"], claims["sub"] = rt2Audience, "mallory"
		return as.Sign(t, "k1", claims)
	}
	for _, tc := range []struct {
		name   string
		claims map[string]any
		admin  bool
	}{
		{"groups claim", map[string]any{"groups": []string{"platform-admins"}}, false},
		{"cognito:groups claim", map[string]any{"cognito:groups": "platform-admins"}, false},
		{"both unread claims", map[string]any{"groups": []string{"platform-admins"}, "cognito:groups": []string{"platform-admins"}}, false},
		{"the configured claim", map[string]any{"roles": []string{"platform-admins"}}, true},
	} {
		code, body := g.whoami(t, sign(tc.claims))
		if got := code == http.StatusOK && strings.Contains(body, `"admin":true`); got != tc.admin {
			t.Errorf("%s: whoami %d %s; admin %v, want %v", tc.name, code, body, got, tc.admin)
		}
	}
}

// TestRedTeam2OAuthSectionReloads (finding 2): adding, changing and
// removing the oauth section of keys.yaml takes effect on reload, for old
// and freshly signed tokens alike; a bad section keeps the previous one
// and says where it is wrong.
func TestRedTeam2OAuthSectionReloads(t *testing.T) {
	as := testenv.StartAuthServer(t)
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: rt2Keys, NoSync: true})
	keysPath := filepath.Join(g.dir, "keys.yaml")
	token := as.Token(t, "ops-bot", url.Values{"resource": {rt2Audience}, "scope": {"ops"}})
	reload := func(content string) {
		t.Helper()
		writeFile(t, keysPath, content)
		if !g.g.ReloadConfig(context.Background()) {
			t.Fatalf("keys.yaml change not reloaded:\n%s", g.logs.String())
		}
	}
	if code, body := g.whoami(t, token); code != http.StatusUnauthorized {
		t.Fatalf("before any oauth section: %d %s, want 401", code, body)
	}

	reload(rt2Keys + rt2OAuth(as.Issuer, "  grants:\n    - match: {scope: ops}\n      admin: true\n      servers: {echo: {}}\n"))
	if code, body := g.whoami(t, token); code != http.StatusOK || !strings.Contains(body, `"admin":true`) {
		t.Fatalf("oauth section added to a running gateway: whoami %d %s, want admin", code, body)
	}

	reload(rt2Keys + rt2OAuth(as.Issuer, "  grants:\n    - match: {scope: ops}\n      servers: {echo: {}}\n"))
	fresh := as.Token(t, "ops-bot", url.Values{"resource": {rt2Audience}, "scope": {"ops"}})
	for name, tok := range map[string]string{"the old token": token, "a fresh token": fresh} {
		if code, body := g.whoami(t, tok); code != http.StatusForbidden {
			t.Errorf("admin grant removed: %s still gets whoami %d %s", name, code, body)
		}
	}

	writeFile(t, keysPath, rt2Keys+rt2OAuth(as.Issuer, "  grants:\n    - match: {scope: ops}\n      admin: true\n      servers: {echo: {}}\n  jwks_urll: x\n"))
	g.g.ReloadConfig(context.Background())
	if code, _ := g.whoami(t, fresh); code != http.StatusForbidden {
		t.Errorf("a bad oauth section replaced the previous one: whoami %d", code)
	}
	logs := g.logs.String()
	if !strings.Contains(logs, "oauth section of keys.yaml does not load") || !strings.Contains(logs, "keys.yaml:") || !strings.Contains(logs, "jwks_urll") {
		t.Errorf("the log does not say where the oauth section is wrong:\n%s", logs)
	}

	reload(rt2Keys)
	if code, body := g.whoami(t, fresh); code != http.StatusUnauthorized {
		t.Errorf("oauth section removed: token still gets %d %s", code, body)
	}
}

// TestRedTeam2IntrospectionOutageThrottled (finding 4): with the
// introspection endpoint failing, wrong keys from one address are still
// throttled, are not all forwarded (with the gateway's client secret) to
// the endpoint, keys in the gateway's own format never are, and a valid
// key keeps working.
func TestRedTeam2IntrospectionOutageThrottled(t *testing.T) {
	as := testenv.StartAuthServer(t)
	var hits, apiKeyShaped atomic.Int64
	// An introspection endpoint in an outage (a fault, not a stand-in:
	// the tokens themselves come from the real authorization server).
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.ParseForm()
		hits.Add(1)
		if strings.HasPrefix(r.Form.Get("token"), "trg_") {
			apiKeyShaped.Add(1)
		}
		http.Error(w, "introspection is down", http.StatusInternalServerError)
	}))
	t.Cleanup(down.Close)
	keys := rt2Keys + rt2OAuth(as.Issuer, fmt.Sprintf(`  introspection: {url: %q, client_id: gw, client_secret: gw-secret}
  grants:
    - match: {scope: ops}
      servers: {echo: {}}
`, down.URL))
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys, NoSync: true, Env: map[string]string{
		"MCP_GATEWAY_AUTH_FAILURE_BURST": "10", "MCP_GATEWAY_AUTH_FAILURE_RATE": "1",
	}})
	retrieve := func(key string) int {
		code, _, _ := httpDo(t, nil, "POST", g.base+"/tool-rag/retrieve", key, `{"query":"echo"}`, nil)
		return code
	}
	if code := retrieve("rt2-agent-secret-7a2b"); code != http.StatusOK {
		t.Fatalf("valid key before the flood: %d", code)
	}
	codes := map[int]int{}
	for i := 0; i < 300; i++ {
		key := fmt.Sprintf("mistyped-key-%03d", i)
		if i%3 == 0 {
			key = fmt.Sprintf("trg_%043d", i) // the gateway's own key format
		}
		codes[retrieve(key)]++
	}
	if codes[http.StatusTooManyRequests] < 250 {
		t.Errorf("300 wrong keys during an introspection outage: %v; want nearly all 429", codes)
	}
	if n := hits.Load(); n > 20 {
		t.Errorf("%d of 300 wrong keys were sent to the failing introspection endpoint; want a handful", n)
	}
	if n := apiKeyShaped.Load(); n != 0 {
		t.Errorf("%d bearers in the gateway's API key format were sent to introspection", n)
	}
	if code := retrieve("rt2-agent-secret-7a2b"); code != http.StatusOK {
		t.Errorf("valid key after the flood: %d, want 200", code)
	}
	t.Logf("codes %v, introspection requests %d", codes, hits.Load())
}

// TestRedTeam2RevocationEndsOpen (finding 5): disabling a key closes its
// open GET stream, cancels its running call and ends its sessions within
// a reload; a key whose expires_at passes is ended on the next check.
func TestRedTeam2RevocationEndsOpen(t *testing.T) {
	keys := func(disabled bool) string {
		return strings.Replace(rt2Keys, "    secret: \"rt2-agent-secret-7a2b\"\n", fmt.Sprintf("    secret: \"rt2-agent-secret-7a2b\"\n    disabled: %v\n", disabled), 1)
	}
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys(false)})
	const key = "rt2-agent-secret-7a2b"
	sid := openLegacySession(t, g.url, key)
	sessionDo(t, "POST", g.url, key, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	// The GET stream, held open.
	streamEnded := openStream(t, g.url, key, sid)

	// A running call: sleep for a minute.
	callDone := make(chan string, 1)
	go func() {
		body := mcpBody("tools/call", `{"name":"run_tool","arguments":{"call_name":"echo__sleep","arguments":{"ms":60000}}}`)
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, "POST", g.url, strings.NewReader(body))
		for k, v := range legacyHdr {
			req.Header.Set(k, v)
		}
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Mcp-Session-Id", sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			callDone <- "error: " + err.Error()
			return
		}
		defer resp.Body.Close()
		b := new(strings.Builder)
		bufio.NewReader(resp.Body).WriteTo(b)
		callDone <- fmt.Sprintf("%d %s", resp.StatusCode, b.String())
	}()
	deadline := time.Now().Add(10 * time.Second)
	for g.g.Live.Open() < 2 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := g.g.Live.Open(); n < 2 {
		t.Fatalf("%d open requests tracked, want the stream and the call", n)
	}

	writeFile(t, filepath.Join(g.dir, "keys.yaml"), keys(true))
	revokedAt := time.Now()
	if !g.g.ReloadConfig(context.Background()) {
		t.Fatal("keys.yaml not reloaded")
	}
	select {
	case <-streamEnded:
	case <-time.After(5 * time.Second):
		t.Error("the revoked key's GET stream is still open 5 s after the reload")
	}
	select {
	case out := <-callDone:
		if strings.Contains(out, "slept") {
			t.Errorf("the revoked key's call completed: %s", out)
		}
	case <-time.After(5 * time.Second):
		t.Error("the revoked key's running call still runs 5 s after the reload")
	}
	t.Logf("stream and call ended %v after the reload", time.Since(revokedAt).Round(time.Millisecond))

	// Re-enabled, the key does not get its old session back.
	writeFile(t, filepath.Join(g.dir, "keys.yaml"), keys(false))
	g.g.ReloadConfig(context.Background())
	if code, body := sessionDo(t, "POST", g.url, key, sid, mcpBody("ping", "{}")); code != http.StatusNotFound {
		t.Errorf("the revoked key's session survived: %d %s", code, body)
	}

	// expires_at passing ends what is open on the next check.
	exp := time.Now().Add(3 * time.Second).UTC().Format(time.RFC3339)
	writeFile(t, filepath.Join(g.dir, "keys.yaml"), strings.Replace(rt2Keys, "  - id: rt2-fresh\n", "  - id: rt2-fresh\n    expires_at: \""+exp+"\"\n", 1))
	g.g.ReloadConfig(context.Background())
	sid2 := openLegacySession(t, g.url, "rt2-fresh-secret-5e6f")
	ended2 := openStream(t, g.url, "rt2-fresh-secret-5e6f", sid2)
	time.Sleep(3500 * time.Millisecond)
	if n := g.g.Live.Recheck(context.Background()); n < 1 {
		t.Errorf("Recheck after expires_at ended %d requests", n)
	}
	select {
	case <-ended2:
	case <-time.After(5 * time.Second):
		t.Error("the expired key's GET stream is still open")
	}
}

// TestRedTeam2PrincipalsTyped (finding 9): a token whose subject is X and
// one that names only the client X are different principals: different
// ids in the policy and audit lines, and no shared session.
func TestRedTeam2PrincipalsTyped(t *testing.T) {
	as := testenv.StartAuthServer(t)
	keys := rt2Keys + rt2OAuth(as.Issuer, `  grants:
    - match: {sub: shared-name}
      admin: true
      servers: {echo: {}}
    - match: {client_id: shared-name}
      admin: true
      servers: {echo: {}}
`)
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys, NoSync: true})
	bySub := as.Sign(t, "k1", map[string]any{"aud": rt2Audience, "sub": "shared-name", "client_id": "some-app"})
	byClient := as.Sign(t, "k1", map[string]any{"aud": rt2Audience, "client_id": "shared-name"})
	_, subBody := g.whoami(t, bySub)
	_, clientBody := g.whoami(t, byClient)
	if !strings.Contains(subBody, `"key_id":"oauth:sub:shared-name"`) || !strings.Contains(clientBody, `"key_id":"oauth:client:shared-name"`) {
		t.Fatalf("principal ids: subject token %s, client token %s", subBody, clientBody)
	}
	sid := openLegacySession(t, g.url, bySub)
	if code, body := sessionDo(t, "POST", g.url, byClient, sid, mcpBody("ping", "{}")); code != http.StatusNotFound {
		t.Errorf("the client-only token used the subject's session: %d %s", code, body)
	}
}

// TestRedTeam2FailuresNeverLockOutValidKeys (finding 10): a flood of
// missing and bad credentials from one address does not refuse a valid
// key from it; guessing (distinct bad credentials) stays bounded.
func TestRedTeam2FailuresNeverLockOutValidKeys(t *testing.T) {
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: rt2Keys, NoSync: true, Env: map[string]string{
		"MCP_GATEWAY_AUTH_FAILURE_BURST": "30", "MCP_GATEWAY_AUTH_FAILURE_RATE": "0.01",
	}})
	retrieve := func(key string) int {
		code, _, _ := httpDo(t, nil, "POST", g.base+"/tool-rag/retrieve", key, `{"query":"echo"}`, nil)
		return code
	}
	if code := retrieve("rt2-admin-secret-0c1d"); code != http.StatusOK {
		t.Fatalf("admin key: %d", code)
	}
	// The report's case: requests without credentials (DELETE /mcp with a
	// session id), then a valid key never used before.
	for i := 0; i < 100; i++ {
		httpDo(t, nil, "DELETE", g.url, "", "", map[string]string{"Mcp-Session-Id": "mcp-session-00000000000000000000000000000000"})
	}
	if code := retrieve("rt2-fresh-secret-5e6f"); code != http.StatusOK {
		t.Errorf("after 100 requests without credentials, a valid key got %d, want 200", code)
	}
	// A misconfigured client repeating one bad key only throttles that key.
	for i := 0; i < 100; i++ {
		retrieve("stale-key-from-a-misconfigured-agent")
	}
	if code := retrieve("stale-key-from-a-misconfigured-agent"); code != http.StatusTooManyRequests {
		t.Errorf("the repeated bad key: %d, want 429", code)
	}
	if code := retrieve("rt2-agent-secret-7a2b"); code != http.StatusOK {
		t.Errorf("after one bad key repeated 100 times, a valid key got %d, want 200", code)
	}
	// Guessing: distinct bad keys exhaust the address's budget...
	throttled := 0
	for i := 0; i < 100; i++ {
		if retrieve(fmt.Sprintf("guess-%d", i)) == http.StatusTooManyRequests {
			throttled++
		}
	}
	if throttled < 60 {
		t.Errorf("100 distinct guesses: only %d throttled; guessing is not bounded", throttled)
	}
	// ...while the keys that work keep working.
	for _, k := range []string{"rt2-admin-secret-0c1d", "rt2-agent-secret-7a2b", "rt2-fresh-secret-5e6f"} {
		if code := retrieve(k); code != http.StatusOK {
			t.Errorf("during guessing, valid key %s… got %d, want 200", k[:8], code)
		}
	}
	// The MCP endpoint too (the bench-peers case: a session opens).
	c := connect(t, g.url, "rt2-admin-secret-0c1d", true, nil)
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Errorf("MCP session during guessing: %v", err)
	}
}

// TestRedTeam2InfoLeaks (finding 11, authentication parts): a 401 names no
// file path; a string exp is refused; the metadata document names the
// configured public URL, not the request's Host.
func TestRedTeam2InfoLeaks(t *testing.T) {
	as := testenv.StartAuthServer(t)
	g := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: rt2Keys, NoSync: true,
		Env: map[string]string{"MCP_GATEWAY_PUBLIC_URL": "https://gw.rt2.test"}})
	for _, bearer := range []string{"", "wrong-key"} {
		code, hdr, body := httpDo(t, nil, "POST", g.url, bearer, mcpBody("ping", "{}"), legacyHdr)
		all := body + hdr.Get("WWW-Authenticate")
		if code != http.StatusUnauthorized || strings.Contains(all, g.dir) || strings.Contains(all, "keys.yaml") || strings.Contains(all, string(os.PathSeparator)+"tmp") {
			t.Errorf("401 (bearer %q) names a path: %d %s", bearer, code, all)
		}
	}
	code, _, body := httpDo(t, nil, "GET", g.base+"/.well-known/oauth-protected-resource/mcp", "", "", map[string]string{"Host": "evil.example"})
	if code != http.StatusOK || !strings.Contains(body, `"resource":"https://gw.rt2.test/mcp"`) || strings.Contains(body, "evil.example") {
		t.Errorf("metadata without OAuth: %d %s; want the configured public URL", code, body)
	}

	keys := rt2Keys + rt2OAuth(as.Issuer, "  grants:\n    - match: {scope: ops}\n      servers: {echo: {}}\n")
	g2 := startGateway(t, gwOpts{Registry: "servers:\n" + stdioEntry(t, "echo", ""), Keys: keys, NoSync: true})
	str := as.Sign(t, "k1", map[string]any{"aud": rt2Audience, "sub": "s", "scope": "ops", "exp": "9999999999"})
	num := as.Sign(t, "k1", map[string]any{"aud": rt2Audience, "sub": "s", "scope": "ops"})
	if code, _, body := httpDo(t, nil, "POST", g2.base+"/tool-rag/retrieve", str, `{"query":"echo"}`, nil); code != http.StatusUnauthorized || !strings.Contains(body, "NumericDate") {
		t.Errorf("token with a string exp: %d %s, want 401 naming NumericDate", code, body)
	}
	if code, _, body := httpDo(t, nil, "POST", g2.base+"/tool-rag/retrieve", num, `{"query":"echo"}`, nil); code != http.StatusOK {
		t.Errorf("the same token with a numeric exp: %d %s", code, body)
	}
}
