package browsertest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// identityKeys: an admin and two agents of the per-principal server up.
const identityKeys = `keys:
  - id: admin
    secret: "k-admin"
    admin: true
    servers: {echo: {}, up: {}}
  - id: alice
    secret: "k-alice"
    servers: {up: {}}
  - id: bob
    secret: "k-bob"
    servers: {up: {}}
`

// upstream is servers/echo over Streamable HTTP behind a proxy that
// wants a bearer token, as a server taking each user's own token does:
// without one it answers 401 with a challenge naming its protected-
// resource metadata (served when issuer is set, for OAuth). It records
// the tokens of the tool calls it let through.
type upstream struct {
	URL    string
	mu     sync.Mutex
	called []string // the bearer token of each tools/call
}

func startUpstream(t *testing.T, issuer string) *upstream {
	t.Helper()
	target, err := url.Parse(testenv.StartEcho(t))
	if err != nil {
		t.Fatal(err)
	}
	target.Path = ""
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	u := &upstream{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, "/.well-known/oauth-protected-resource") && issuer != "" {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"resource": %q, "authorization_servers": [%q]}`, u.URL+"/mcp", issuer)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || tok == "" {
			w.Header().Set("WWW-Authenticate", `Bearer resource_metadata="`+u.URL+`/.well-known/oauth-protected-resource"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && r.ContentLength != 0 {
			body, _ := httputil.DumpRequest(r, true)
			if strings.Contains(string(body), `"tools/call"`) {
				u.mu.Lock()
				u.called = append(u.called, tok)
				u.mu.Unlock()
			}
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	u.URL = srv.URL
	return u
}

// calls returns the tokens of the tool calls so far.
func (u *upstream) calls() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]string(nil), u.called...)
}

// startIdentity starts a gateway whose server up (the upstream above) is
// per principal in mode, listing its tools with the catalog token
// svc-catalog.
func startIdentity(t *testing.T, mode, issuer string) (*localtest.Gateway, *upstream) {
	t.Helper()
	up := startUpstream(t, issuer)
	auth := "{mode: " + mode + "}"
	if mode == "oauth" {
		auth = "{mode: oauth, client_id: gateway-client}"
	}
	e := startGatewayKeys(t, fmt.Sprintf("  up:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer svc-catalog\"}\n    auth: %s\n", up.URL+"/mcp", auth),
		identityKeys, nil)
	return e, up
}

// agent is an MCP client that declares URL elicitation.
func agent(t *testing.T, e *localtest.Gateway, key string) *client.Client {
	t.Helper()
	c, _ := testenv.Connect(t, e.URL, testenv.MCPClient{Key: key, Name: "browser",
		Capabilities: mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapability{URL: &struct{}{}}}})
	return c
}

var linkInText = regexp.MustCompile(`https?://\S+/connect/\S+`)

// connectLink calls up__echo and returns the connect link the gateway
// answered with: the -32042 URL elicitation, or (protocols without it)
// the link in the tool error whose _meta carries that error.
func connectLink(t *testing.T, c *client.Client) string {
	t.Helper()
	res, err := testenv.CallTool(c, 30*time.Second, "up__echo", map[string]any{"text": "hi"})
	var el mcp.URLElicitationRequiredError
	switch {
	case errors.As(err, &el) && len(el.Elicitations) == 1:
		return el.Elicitations[0].URL
	case err == nil && res.IsError && strings.Contains(fmt.Sprint(res.Meta), "-32042"):
		return linkInText.FindString(testenv.Text(res))
	}
	t.Fatalf("up__echo without a connection: want a -32042 connect link, got %v %v", res, err)
	return ""
}

// echo calls up__echo and returns its text ("" with the error).
func echo(t *testing.T, c *client.Client) string {
	t.Helper()
	res, err := testenv.CallTool(c, 30*time.Second, "up__echo", map[string]any{"text": "hi"})
	if err != nil || res.IsError {
		return ""
	}
	return testenv.Text(res)
}

// connections lists who is connected to up, as the admin sees it.
func connections(t *testing.T, e *localtest.Gateway) string {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.Server.URL+"/tool-rag/admin/connections?server=up", nil)
	req.Header.Set("Authorization", "Bearer k-admin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return string(b)
}

// submitLink opens a connect link in the tab, signs in with key, types
// secret (when the page asks for one) and submits.
func submitLink(t *testing.T, ctx context.Context, link, key, secret string) {
	t.Helper()
	actions := []chromedp.Action[chromedp.Void]{chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("key")), chromedp.SetValue(chromedp.ID("key"), key)}
	if secret != "" {
		actions = append(actions, chromedp.SetValue(chromedp.ID("secret"), secret))
	}
	run(t, ctx, "submit the connect page", append(actions, chromedp.Click(chromedp.ID("submit")))...)
}

// noBrowserErrors fails on a Content Security Policy report or a script
// error the tab logged (refused loads are expected: 403 and 410 pages).
func noBrowserErrors(t *testing.T, logged func() []string) {
	t.Helper()
	for _, msg := range logged() {
		if strings.Contains(msg, "Content Security Policy") || strings.HasPrefix(msg, "exception") {
			t.Errorf("browser reported: %s", msg)
		}
	}
}

// TestUpstreamIdentityUserSecretInBrowser drives the user_secret connect
// page in headless chromium: another principal opening the link is
// refused and nothing is stored; the link's principal stores the token
// and the retried call reaches the upstream with it; a replay is refused
// and changes nothing.
func TestUpstreamIdentityUserSecretInBrowser(t *testing.T) {
	e, up := startIdentity(t, "user_secret", "")
	alice := agent(t, e, "k-alice")
	link := connectLink(t, alice)
	if !strings.HasPrefix(link, e.Server.URL+"/connect/") {
		t.Fatalf("connect link %q is not the gateway's", link)
	}
	ctx, logged := browser(t)

	t.Run("the page", func(t *testing.T) {
		run(t, ctx, "open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("secret")))
		got := eval[map[string]string](t, ctx, `({
			title: document.title, scripts: String(document.scripts.length),
			key: document.getElementById("key").type + " " + document.getElementById("key").autocomplete,
			secret: document.getElementById("secret").type + " " + document.getElementById("secret").autocomplete,
			text: document.body.innerText})`)
		if got["title"] != "Connect up" || got["scripts"] != "0" || got["key"] != "password off" || got["secret"] != "password off" {
			t.Errorf("connect page: %v", got)
		}
		for _, want := range []string{"as you", "works only for that key, once", "personal access token for up", "stored encrypted", "never shown again"} {
			if !strings.Contains(got["text"], want) {
				t.Errorf("the page does not say %q: %s", want, got["text"])
			}
		}
		screenshot(t, ctx, "connect-secret")
	})

	t.Run("another principal is refused", func(t *testing.T) {
		submitLink(t, ctx, link, "k-bob", "pat-bob")
		run(t, ctx, "refusal", chromedp.WaitVisible(`//p[@id="error" and contains(., "issued to someone else")]`))
		if got := connections(t, e); !strings.Contains(got, `"connections":[]`) {
			t.Errorf("bob's attempt stored a grant: %s", got)
		}
		submitLink(t, ctx, link, "wrong-key", "pat-x")
		run(t, ctx, "a wrong key", chromedp.WaitVisible(`//p[@id="error" and contains(., "API key was not accepted")]`), chromedp.WaitVisible(chromedp.ID("secret")))
		if got := connections(t, e); !strings.Contains(got, `"connections":[]`) {
			t.Errorf("a wrong key stored a grant: %s", got)
		}
	})

	t.Run("the principal stores the token", func(t *testing.T) {
		submitLink(t, ctx, link, "k-alice", "pat-alice")
		run(t, ctx, "stored", chromedp.WaitVisible(`//p[@id="done" and contains(., "Stored")]`))
		screenshot(t, ctx, "connect-secret-stored")
		if got := echo(t, alice); !strings.Contains(got, "hi") {
			t.Fatalf("alice's retried call: %q", got)
		}
		if calls := up.calls(); len(calls) != 1 || calls[0] != "pat-alice" {
			t.Errorf("the upstream's tool calls carried %q, want alice's token once", calls)
		}
	})

	t.Run("a replay is refused", func(t *testing.T) {
		submitLink(t, ctx, link, "k-alice", "pat-replayed")
		run(t, ctx, "refusal", chromedp.WaitVisible(`//p[@id="error" and contains(., "already used")]`))
		if got := echo(t, alice); !strings.Contains(got, "hi") {
			t.Fatalf("alice after the replay: %q", got)
		}
		for _, tok := range up.calls() {
			if tok != "pat-alice" {
				t.Errorf("after the replay the upstream got %q", tok)
			}
		}
	})
	noBrowserErrors(t, logged)
}

// TestUpstreamIdentityConsoleRevoke: the admin sees on the servers page
// how many principals are connected, opens the list (key ids, never a
// token), revokes one principal's grant after confirming, and the count
// drops; that principal's next call answers with a connect link again.
func TestUpstreamIdentityConsoleRevoke(t *testing.T) {
	e, _ := startIdentity(t, "user_secret", "")
	clients := map[string]*client.Client{}
	for _, who := range []string{"alice", "bob"} {
		clients[who] = agent(t, e, "k-"+who)
		res, err := http.PostForm(connectLink(t, clients[who]), url.Values{"key": {"k-" + who}, "secret": {"pat-" + who}})
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s connecting: %v %v", who, res, err)
		}
		res.Body.Close()
	}
	ctx, logged := browser(t)
	run(t, ctx, "open the console", chromedp.Navigate(e.Server.URL+"/console/#servers"), chromedp.WaitVisible(chromedp.ID("signin-form")))
	signIn(t, ctx, "k-admin")
	count := `//tr[@data-server="up"]//button[@data-connections="up" and normalize-space()="%d connected"]`
	run(t, ctx, "the count", chromedp.Navigate(e.Server.URL+"/console/#servers"), chromedp.WaitVisible(fmt.Sprintf(count, 2)))
	run(t, ctx, "open the list", chromedp.Click(fmt.Sprintf(count, 2)),
		chromedp.WaitVisible(chromedp.CSS(`#conn-table tr[data-key="alice"]`)), chromedp.WaitVisible(chromedp.CSS(`#conn-table tr[data-key="bob"]`)))
	panel := eval[string](t, ctx, `document.getElementById("conn-panel").innerText`)
	if strings.Contains(panel, "pat-") || !strings.Contains(panel, "user_secret") || !strings.Contains(panel, "ago") {
		t.Errorf("the connections panel: %q", panel)
	}
	if html := eval[string](t, ctx, `document.documentElement.outerHTML`); strings.Contains(html, "pat-") {
		t.Error("the console page holds a token")
	}
	screenshot(t, ctx, "console-connections")

	// Cancel leaves the grant; confirm revokes it.
	bob := `#conn-table tr[data-key="bob"] `
	run(t, ctx, "revoke, cancel", chromedp.Click(chromedp.CSS(bob+`button[data-action="revoke"]`)),
		chromedp.WaitVisible(chromedp.CSS(bob+`button[data-action="confirm"]`)),
		chromedp.Click(chromedp.CSS(bob+`button[data-action="cancel"]`)),
		chromedp.WaitVisible(chromedp.CSS(bob+`button[data-action="revoke"]`)))
	if got := echo(t, clients["bob"]); !strings.Contains(got, "hi") {
		t.Fatalf("bob after a cancelled revoke: %q", got)
	}
	run(t, ctx, "revoke, confirm", chromedp.Click(chromedp.CSS(bob+`button[data-action="revoke"]`)),
		chromedp.WaitVisible(`//tr[@data-key="bob"]//span[contains(., "Revoke key bob's connection to up?")]`),
		chromedp.Click(chromedp.CSS(bob+`button[data-action="confirm"]`)),
		chromedp.WaitVisible(`//p[@id="conn-status" and contains(., "Revoked 1 connection of key bob")]`),
		chromedp.WaitNotPresent(chromedp.CSS(`#conn-table tr[data-key="bob"]`)),
		chromedp.WaitVisible(fmt.Sprintf(count, 1)))
	screenshot(t, ctx, "console-connections-revoked")

	if got := connections(t, e); strings.Contains(got, `"key_id":"bob"`) || !strings.Contains(got, `"key_id":"alice"`) {
		t.Errorf("the vault after revoking bob: %s", got)
	}
	if link := connectLink(t, clients["bob"]); !strings.HasPrefix(link, e.Server.URL+"/connect/") {
		t.Errorf("bob's next call: link %q", link)
	}
	if got := echo(t, clients["alice"]); !strings.Contains(got, "hi") {
		t.Errorf("alice after bob was revoked: %q", got)
	}
	noBrowserErrors(t, logged)
}

// TestUpstreamIdentityOAuthInBrowser completes an OAuth connect link in
// headless chromium against a real authorization server (npm
// oauth2-mock-server, which approves at once): the form's redirect to the
// authorization server and back is allowed by the page's policy, and the
// retried call reaches the upstream with the issued token.
func TestUpstreamIdentityOAuthInBrowser(t *testing.T) {
	as := testenv.StartAuthServer(t)
	e, up := startIdentity(t, "oauth", as.Issuer)
	alice := agent(t, e, "k-alice")
	link := connectLink(t, alice)
	ctx, logged := browser(t)
	submitLink(t, ctx, link, "k-alice", "")
	run(t, ctx, "connected", chromedp.WaitVisible(`//p[@id="done" and contains(., "Connected")]`))
	if got := echo(t, alice); !strings.Contains(got, "hi") {
		t.Fatalf("alice's retried call: %q", got)
	}
	if calls := up.calls(); len(calls) != 1 || strings.Count(calls[0], ".") != 2 {
		t.Errorf("the upstream's tool calls carried %q, want one issued token (a JWT)", calls)
	}
	noBrowserErrors(t, logged)
}
