package functions_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/upauth"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

const tokenExchangeGrant = "urn:ietf:params:oauth:grant-type:token-exchange"

// Token exchange (RFC 8693) on the Lambda path: the gateway function under
// aws-lambda-rie accepts OAuth access tokens of a real authorization server
// (npm oidc-provider, TOOLRAG_OAUTH_*) and, for a token_exchange server,
// exchanges each caller's token at the provider for one whose audience is
// the upstream; a real upstream verifying signature, issuer, audience and
// expiry sees each caller as themselves. The exchanged token is cached per
// (principal, server) in the vault table, sealed (one exchange per
// principal across two instances, no token bytes in the rows); the
// inbound token never reaches the upstream (which would refuse it anyway),
// and an API key caller is not sent upstream.
func TestUpstreamIdentityLambdaTokenExchange(t *testing.T) {
	p := testenv.StartOIDCProvider(t)
	who := testenv.NewJWTWhoServer(t, p.Issuer)
	catalog := p.SignToken(t, map[string]any{"sub": "catalog", "aud": who.URL + "/mcp"})
	d := newIdentityDeployment(t, who, &upauth.Config{Mode: upauth.ModeTokenExchange, ClientID: testenv.ExchangeClientID,
		ClientSecret: testenv.ExchangeClientSecret, TokenEndpoint: p.Issuer + "/token"}, catalog)
	const gwAud = "https://gateway.test/mcp"
	d.env["TOOLRAG_OAUTH_ISSUER"] = p.Issuer
	d.env["TOOLRAG_OAUTH_AUDIENCE"] = gwAud
	d.env["TOOLRAG_OAUTH_GRANTS"] = `[{"match":{"scope":"gw"},"servers":{"who":{"tool_prefixes":["*"]}}}]`
	gw, front := d.syncAndStart(t)

	inbound := map[string]string{}
	for _, sub := range []string{"dana", "erin"} {
		inbound[sub] = p.SignToken(t, map[string]any{"sub": sub, "aud": gwAud, "scope": "gw"})
		if _, ok := who.Check(inbound[sub]); ok {
			t.Fatalf("the upstream accepts %s's token issued for the gateway", sub)
		}
	}
	before := p.OIDCStats(t).Grants[tokenExchangeGrant]
	for _, sub := range []string{"dana", "erin"} {
		s := openSession(t, front, inbound[sub], urlElicitation)
		for i := range 2 {
			if text, isErr := testenv.RawResultText(whoami(s)); isErr || text != "sub="+sub {
				t.Fatalf("%s's call %d: %v %q", sub, i+1, isErr, text)
			}
		}
	}
	// One function instance (one emulator): one exchange per principal
	// over two calls each.
	if n := p.OIDCStats(t).Grants[tokenExchangeGrant] - before; n != 2 {
		t.Errorf("token exchanges for two principals over two calls each: %d, want 2 (the exchanged token is cached)", n)
	}
	all := who.Seen()
	seen := map[string]string{"dana": all["dana"], "erin": all["erin"]}
	for sub, tok := range seen {
		if tok == "" || tok == inbound[sub] {
			t.Errorf("%s reached the upstream with %s", sub, map[bool]string{true: "the inbound token", false: "no token"}[tok != ""])
		}
	}
	if seen["dana"] == seen["erin"] {
		t.Error("dana and erin reached the upstream with the same token")
	}

	// A second instance uses dana's exchanged token from the vault table
	// (DynamoDB, sealed by KMS): no new exchange, and dana is still dana.
	gw2 := startFunction(t, filepath.Join(testenv.ToolsDir(t), "bin", "aws-lambda-rie"), "toolrag-gateway", testenv.GoBinary(t, "./functions/gateway"), 29, d.env)
	front2 := apiGateway(t, gw2).URL
	s2 := openSession(t, front2, inbound["dana"], nil)
	for range 2 {
		if text, isErr := testenv.RawResultText(whoami(s2)); isErr || text != "sub=dana" {
			t.Fatalf("dana on the second instance: %v %q", isErr, text)
		}
	}
	if n := p.OIDCStats(t).Grants[tokenExchangeGrant] - before; n != 2 {
		t.Errorf("token exchanges over two instances: %d, want 2 (one per principal)", n)
	}
	// The raw vault rows hold neither the inbound nor the exchanged tokens.
	rows := d.vaultRows(t)
	if len(rows) != 2 {
		t.Errorf("%d vault rows, want 2 (one exchanged token per principal)", len(rows))
	}
	noTokenIn(t, rows, inbound["dana"], inbound["erin"], seen["dana"], seen["erin"])

	// An API key caller has no token to exchange: not sent upstream.
	// (The sync listed the tools with the catalog credential: "catalog"
	// is among the subjects seen; callers' calls never used it.)
	subjects := len(who.Seen())
	alice := openSession(t, front, "k-alice", urlElicitation)
	msg := whoami(alice)
	if text, isErr := testenv.RawResultText(msg); !isErr || strings.Contains(text, "sub=") {
		t.Errorf("an API key caller reached the token_exchange server: %v %q", isErr, text)
	}
	if all := who.Seen(); len(all) != subjects || all["catalog"] != catalog {
		t.Errorf("subjects seen upstream: %v", keysOf(all))
	}
	if logs := gw.logs.String() + gw2.logs.String(); strings.Contains(logs, inbound["dana"]) || strings.Contains(logs, seen["dana"]) {
		t.Error("a token reached the function logs")
	}
}

func keysOf(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// An expired connect link on the Lambda path (TOOL_RAG_CONNECT_LINK_TTL
// 2 s): opening or completing it is refused, nothing is stored in the
// vault table, and the principal's next call still asks to connect.
func TestUpstreamIdentityLambdaExpiredLink(t *testing.T) {
	ctx := context.Background()
	d := newIdentityDeployment(t, testenv.NewWhoServer(t, map[string]string{"catalog-token": "catalog"}), &upauth.Config{Mode: upauth.ModeUserSecret}, "catalog-token")
	d.env["TOOL_RAG_CONNECT_LINK_TTL"] = "2"
	_, front := d.syncAndStart(t)

	alice := openSession(t, front, "k-alice", urlElicitation)
	link := testenv.ElicitationURL(whoami(alice))
	if !strings.HasPrefix(link, front+"/connect/") {
		t.Fatalf("alice's first call: no connect link (%q)", link)
	}
	time.Sleep(3 * time.Second)

	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	t.Logf("GET an expired link: HTTP %d", resp.StatusCode)
	if resp.StatusCode < 400 || resp.StatusCode >= 500 {
		t.Errorf("GET an expired link: HTTP %d, want 4xx", resp.StatusCode)
	}
	d.who.Set("tok-alice", "alice")
	code, page := testenv.PostForm(t, link, url.Values{"key": {"k-alice"}, "secret": {"tok-alice"}})
	t.Logf("completing an expired link: HTTP %d", code)
	if code < 400 || code >= 500 || strings.Contains(page, "Stored") {
		t.Errorf("completing an expired link: %d %s", code, page)
	}

	for _, it := range d.grantRows(t) {
		t.Errorf("a grant row was stored after an expired link: principal %s", it["principal"].(*types.AttributeValueMemberS).Value)
	}
	if _, err := dynamo.NewVaultRows(d.ddb, d.vault).GetRow(ctx, vault.Key{Principal: principalOf("alice"), Server: "who"}); err == nil {
		t.Error("alice's grant is stored after an expired link")
	}
	msg := whoami(alice)
	if l := testenv.ElicitationURL(msg); !strings.HasPrefix(l, front+"/connect/") || l == link {
		t.Errorf("alice's call after the expired link: %s", fmt.Sprint(msg))
	}
}
