package functions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/kmsseal"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/upauth"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

// openSession opens a raw 2025-11-25 session with the gateway behind the
// HTTP front at base, whose client declares caps.
func openSession(t *testing.T, base, key string, caps map[string]any) *testenv.RawSession {
	t.Helper()
	return testenv.OpenRawSession(t, testenv.PostTo(base+"/mcp"), key, caps)
}

// whoami calls the who server's whoami tool in s.
func whoami(s *testenv.RawSession) map[string]any {
	return s.CallTool("who__whoami", map[string]any{})
}

var urlElicitation = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}

// identityDeployment is a deployment with the token vault: its table in
// DynamoDB Local, its key in local-kms, the who server (auth user_secret,
// a catalog credential for the sync) and keys alice and bob.
type identityDeployment struct {
	*deployment
	who    *testenv.WhoServer
	kms    *kms.Client
	keyARN string
	vault  string
}

func newIdentityDeployment(t *testing.T, who *testenv.WhoServer, a *upauth.Config, catalogToken string) *identityDeployment {
	t.Helper()
	ctx := context.Background()
	d := &identityDeployment{deployment: newDeployment(t), who: who}
	d.vault = testenv.UniqueName(t, "rie-vault-")
	if err := dynamo.CreateTables(ctx, d.ddb, dynamo.Tables{Vault: d.vault}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		d.ddb.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(d.vault)})
	})
	kmsURL := testenv.KMS(t)
	var err error
	if d.kms, err = awsclient.KMS(ctx, kmsURL); err != nil {
		t.Fatal(err)
	}
	key, err := d.kms.CreateKey(ctx, &kms.CreateKeyInput{Description: aws.String("toolrag vault " + t.Name())})
	if err != nil {
		t.Fatal(err)
	}
	d.keyARN = aws.ToString(key.KeyMetadata.Arn)
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: d.who.URL + "/mcp",
		Headers: map[string]string{"Authorization": "Bearer " + catalogToken}, Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewRegistryStore(d.ddb, d.tables.Registry).PutServer(ctx, "who", doc); err != nil {
		t.Fatal(err)
	}
	keys := dynamo.NewKeyStore(d.ddb, d.tables.Keys)
	for _, id := range []string{"alice", "bob"} {
		if err := keys.Create(ctx, policy.Key{ID: id, SecretHash: policy.HashSecret("k-" + id),
			Servers: map[string]policy.Rule{"who": {ToolPrefixes: []string{"*"}}}}); err != nil {
			t.Fatal(err)
		}
	}
	d.env["TOOL_RAG_VAULT_TABLE"] = d.vault
	d.env["TOOL_RAG_VAULT_KMS_KEY"] = d.keyARN
	d.env["TOOL_RAG_KMS_ENDPOINT"] = kmsURL
	d.env["TOOL_RAG_KEY_CACHE_TTL"] = "0.001"
	return d
}

// syncAndStart runs the sync function once (the catalog) and starts the
// gateway function behind an HTTP API front.
func (d *identityDeployment) syncAndStart(t *testing.T) (gw *function, front string) {
	t.Helper()
	rie, _ := emulated(t)
	syncFn := startFunction(t, rie, "toolrag-sync", testenv.GoBinary(t, "./functions/sync"), 900, d.env)
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sync.Synced != 2 || rep.IndexErr != "" {
		t.Fatalf("sync report: %+v", rep)
	}
	gw = startFunction(t, rie, "toolrag-gateway", testenv.GoBinary(t, "./functions/gateway"), 29, d.env)
	return gw, apiGateway(t, gw).URL
}

// vaultRows reads every row of the vault table.
func (d *identityDeployment) vaultRows(t *testing.T) []map[string]types.AttributeValue {
	t.Helper()
	out, err := d.ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(d.vault), ConsistentRead: aws.Bool(true)})
	if err != nil {
		t.Fatal(err)
	}
	return out.Items
}

// grantRows reads the vault table's grant rows: every row but the records
// of used connect links (principal "#used").
func (d *identityDeployment) grantRows(t *testing.T) []map[string]types.AttributeValue {
	t.Helper()
	var grants []map[string]types.AttributeValue
	for _, it := range d.vaultRows(t) {
		if p, _ := it["principal"].(*types.AttributeValueMemberS); p != nil && p.Value != "#used" {
			grants = append(grants, it)
		}
	}
	return grants
}

// noTokenIn fails the test if a string or binary attribute of rows holds
// the bytes of one of tokens.
func noTokenIn(t *testing.T, rows []map[string]types.AttributeValue, tokens ...string) {
	t.Helper()
	for _, it := range rows {
		for name, av := range it {
			var b []byte
			switch v := av.(type) {
			case *types.AttributeValueMemberS:
				b = []byte(v.Value)
			case *types.AttributeValueMemberB:
				b = v.Value
			}
			for _, tok := range tokens {
				if bytes.Contains(b, []byte(tok)) {
					t.Fatalf("vault attribute %s holds a token", name)
				}
			}
		}
	}
}

func principalOf(id string) string {
	return auth.KeyPrincipal(policy.Key{ID: id, SecretHash: policy.HashSecret("k-" + id)})
}

// Per-user secrets on the Lambda path: the gateway function under
// aws-lambda-rie with the vault in DynamoDB Local sealed by local-kms.
// Two principals each reach the upstream as themselves; an unconnected
// one gets -32042 with a link (or a tool error with it), completes it,
// and the retried call succeeds; a link opened by another principal or
// replayed is refused and nothing is stored; the raw rows hold no token
// bytes and a row copied to another principal does not open; an upstream
// 401 asks again; revoke and key removal end the grant.
func TestUpstreamIdentityLambdaUserSecret(t *testing.T) {
	ctx := context.Background()
	d := newIdentityDeployment(t, testenv.NewWhoServer(t, map[string]string{"catalog-token": "catalog"}), &upauth.Config{Mode: upauth.ModeUserSecret}, "catalog-token")
	gw, front := d.syncAndStart(t)

	alice := openSession(t, front, "k-alice", urlElicitation)
	link := testenv.ElicitationURL(whoami(alice))
	if !strings.HasPrefix(link, front+"/connect/") {
		t.Fatalf("alice's first call: no connect link (%q)", link)
	}

	// Bob cannot complete alice's link; nothing is stored, and the link
	// stays good for alice.
	if code, page := testenv.PostForm(t, link, url.Values{"key": {"k-bob"}, "secret": {"tok-bob"}}); code != http.StatusForbidden || !strings.Contains(page, "someone else") {
		t.Fatalf("bob on alice's link: %d %s", code, page)
	}
	if n := len(d.grantRows(t)); n != 0 {
		t.Fatalf("%d rows stored after a refused link", n)
	}
	// Altered: refused, nothing stored.
	altered := link[:len(link)-3] + "AAA"
	if altered == link {
		altered = link[:len(link)-3] + "BBB"
	}
	if code, page := testenv.PostForm(t, altered, url.Values{"key": {"k-alice"}, "secret": {"tok-alice"}}); code != http.StatusGone || !strings.Contains(page, "not valid") {
		t.Fatalf("altered link: %d %s", code, page)
	}
	if n := len(d.grantRows(t)); n != 0 {
		t.Fatalf("%d rows stored after an altered link", n)
	}
	resp, err := http.Get(link)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the link: %d", resp.StatusCode)
	}
	d.who.Set("tok-alice", "alice")
	if code, page := testenv.PostForm(t, link, url.Values{"key": {"k-alice"}, "secret": {"tok-alice"}}); code != http.StatusOK || !strings.Contains(page, "Stored") {
		t.Fatalf("alice completes her link: %d %s", code, page)
	}
	// Replayed (single use through the vault table, not instance memory:
	// a second instance refuses it too).
	gw2 := startFunction(t, filepath.Join(testenv.ToolsDir(t), "bin", "aws-lambda-rie"), "toolrag-gateway", testenv.GoBinary(t, "./functions/gateway"), 29, d.env)
	front2 := apiGateway(t, gw2).URL
	replay := front2 + strings.TrimPrefix(link, front)
	if code, page := testenv.PostForm(t, replay, url.Values{"key": {"k-alice"}, "secret": {"tok-evil"}}); code != http.StatusGone || !strings.Contains(page, "already used") {
		t.Fatalf("replayed link on another instance: %d %s", code, page)
	}
	if text, isErr := testenv.RawResultText(whoami(alice)); isErr || text != "sub=alice" {
		t.Fatalf("alice's retried call: %v %q", isErr, text)
	}

	// Bob's client does not declare URL elicitation: a tool error with
	// the link.
	bob := openSession(t, front, "k-bob", nil)
	text, isErr := testenv.RawResultText(whoami(bob))
	i := strings.Index(text, front+"/connect/")
	if !isErr || i < 0 {
		t.Fatalf("bob's first call: %v %q", isErr, text)
	}
	bobLink := strings.Fields(text[i:])[0]
	d.who.Set("tok-bob", "bob")
	if code, page := testenv.PostForm(t, bobLink, url.Values{"key": {"k-bob"}, "secret": {"tok-bob"}}); code != http.StatusOK {
		t.Fatalf("bob completes his link: %d %s", code, page)
	}
	// Each as themselves, on both instances (the second one opens the
	// grants from DynamoDB with KMS).
	for i, c := range []struct {
		s    *testenv.RawSession
		want string
	}{{alice, "sub=alice"}, {bob, "sub=bob"}, {openSession(t, front2, "k-alice", nil), "sub=alice"}, {openSession(t, front2, "k-bob", nil), "sub=bob"}} {
		if text, isErr := testenv.RawResultText(whoami(c.s)); isErr || text != c.want {
			t.Fatalf("session %d: %v %q, want %q", i, isErr, text, c.want)
		}
	}
	seen := d.who.Seen()
	if seen["alice"] != "tok-alice" || seen["bob"] != "tok-bob" {
		t.Fatalf("tokens the upstream saw: %v", seen)
	}

	// The raw rows: no token bytes; alice's row copied to bob's key does
	// not open (KMS refuses the encryption context).
	grants := d.grantRows(t)
	if len(grants) != 2 {
		t.Fatalf("%d grant rows, want 2", len(grants))
	}
	noTokenIn(t, grants, "tok-alice", "tok-bob")
	vr := dynamo.NewVaultRows(d.ddb, d.vault)
	sealer := kmsseal.New(d.kms, d.keyARN)
	aliceKey := vault.Key{Principal: principalOf("alice"), Server: "who"}
	row, err := vr.GetRow(ctx, aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := vault.New(vr, sealer, 0).Get(ctx, aliceKey); err != nil || g.Secret != "tok-alice" {
		t.Fatalf("alice's row under her own context: %v", err)
	}
	row.Principal = principalOf("carol")
	if err := vr.PutRow(ctx, row); err != nil {
		t.Fatal(err)
	}
	if g, err := vault.New(vr, sealer, 0).Get(ctx, vault.Key{Principal: row.Principal, Server: "who"}); err == nil || !strings.Contains(err.Error(), "KMS Decrypt") {
		t.Fatalf("alice's row copied to carol opened: %v %v", g, err)
	}
	_ = vr.DeleteRow(ctx, vault.Key{Principal: row.Principal, Server: "who"})

	// The upstream stops accepting alice's token: HTTP 401 drops the
	// grant and asks again; she stores a new one.
	d.who.Set("tok-alice", "")
	if link := testenv.ElicitationURL(whoami(alice)); !strings.HasPrefix(link, front+"/connect/") {
		t.Fatalf("after the upstream's 401: no new link")
	}
	if _, err := vr.GetRow(ctx, aliceKey); err == nil {
		t.Fatal("the refused grant is still stored")
	}

	// Revoke through REST: the grant ends on the instance that revokes.
	req, _ := http.NewRequest(http.MethodDelete, front+"/tool-rag/connections/who", nil)
	req.Header.Set("Authorization", "Bearer k-bob")
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"revoked":true`) {
		t.Fatalf("DELETE /tool-rag/connections/who: %d %s", resp.StatusCode, body)
	}
	if link := testenv.ElicitationURL(whoami(openSession(t, front, "k-bob", urlElicitation))); link == "" {
		t.Fatal("bob's call after revoking: no connect link")
	}

	// Key removal (`toolrag keys revoke`: the key disabled, its
	// connections deleted): bob connects again, then his key is revoked.
	bobLink = testenv.ElicitationURL(whoami(openSession(t, front, "k-bob", urlElicitation)))
	if code, page := testenv.PostForm(t, bobLink, url.Values{"key": {"k-bob"}, "secret": {"tok-bob"}}); code != http.StatusOK {
		t.Fatalf("bob reconnects: %d %s", code, page)
	}
	if err := dynamo.NewKeyStore(d.ddb, d.tables.Keys).Revoke(ctx, "bob"); err != nil {
		t.Fatal(err)
	}
	if n, err := vr.DeleteKey(ctx, "bob"); err != nil || n != 1 {
		t.Fatalf("delete bob's connections: %d %v", n, err)
	}
	if n := len(d.grantRows(t)); n != 0 {
		t.Fatalf("%d grant rows left after the key's removal", n)
	}
	answer := bob.Post(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": map[string]any{"name": "who__whoami", "arguments": map[string]any{}}})
	if answer.StatusCode != http.StatusUnauthorized {
		t.Fatalf("bob's call with the revoked key: HTTP %d", answer.StatusCode)
	}
	if logs := gw.logs.String() + gw2.logs.String(); strings.Contains(logs, "tok-alice") || strings.Contains(logs, "tok-bob") {
		t.Fatal("a token reached the function logs")
	}
}

// OAuth per principal on the Lambda path: the gateway function under
// aws-lambda-rie is the OAuth client of a real authorization server (npm
// oauth2-mock-server: authorization code + PKCE, refresh, revocation) for
// a real upstream that verifies each token's signature, issuer, audience
// and expiry. The link, its sign-in and the callback are served by the
// function (any instance: state and nonces live in DynamoDB, sealed by
// KMS); a flow finished in another browser or replayed is refused; a
// short-lived token is refreshed; an upstream 401 asks again; revoking
// revokes at the server.
func TestUpstreamIdentityLambdaOAuth(t *testing.T) {
	as := testenv.StartAuthServer(t)
	who := testenv.NewJWTWhoServer(t, as.Issuer)
	catalog := as.Token(t, "catalog", url.Values{"resource": {who.URL + "/mcp"}})
	d := newIdentityDeployment(t, who, &upauth.Config{Mode: upauth.ModeOAuth, ClientID: "gateway-client"}, catalog)
	gw, front := d.syncAndStart(t)
	gw2 := startFunction(t, filepath.Join(testenv.ToolsDir(t), "bin", "aws-lambda-rie"), "toolrag-gateway", testenv.GoBinary(t, "./functions/gateway"), 29, d.env)
	front2 := apiGateway(t, gw2).URL

	alice := openSession(t, front, "k-alice", urlElicitation)
	link := testenv.ElicitationURL(whoami(alice))
	if !strings.HasPrefix(link, front+"/connect/") {
		t.Fatalf("alice's first call: no connect link (%q)", link)
	}
	ab := testenv.NewUserAgent(t)
	authorize := ab.Connect(link, "k-alice")
	au, _ := url.Parse(authorize)
	q := au.Query()
	if !strings.HasPrefix(authorize, as.Issuer+"/authorize?") || q.Get("code_challenge_method") != "S256" || q.Get("code_challenge") == "" ||
		q.Get("resource") != who.URL+"/mcp" || q.Get("redirect_uri") != front+"/connect-callback" || q.Get("state") == "" {
		t.Fatalf("authorization request: %s", authorize)
	}
	// Finished in another browser: refused, nothing stored.
	if code, body := testenv.NewUserAgent(t).Approve(authorize, "bob"); code != http.StatusForbidden || !strings.Contains(body, "another browser") {
		t.Fatalf("alice's flow finished in another browser: %d %s", code, body)
	}
	if code, body := ab.Approve(authorize, "alice"); code != http.StatusOK || !strings.Contains(body, "Connected") {
		t.Fatalf("alice's callback: %d %s", code, body)
	}
	if code, body := ab.Approve(authorize, "alice"); code == http.StatusOK {
		t.Fatalf("a replayed state was accepted: %s", body)
	}
	// Her retried call, on this instance and on another one.
	for _, s := range []*testenv.RawSession{alice, openSession(t, front2, "k-alice", nil)} {
		if text, isErr := testenv.RawResultText(whoami(s)); isErr || text != "sub=alice" {
			t.Fatalf("alice after connecting: %v %q", isErr, text)
		}
	}

	// Bob connects through the second instance with short-lived tokens:
	// his next calls refresh first.
	as.SetTTL(t, 30)
	bob := openSession(t, front2, "k-bob", urlElicitation)
	bobLink := testenv.ElicitationURL(whoami(bob))
	bb := testenv.NewUserAgent(t)
	if code, body := bb.Approve(bb.Connect(bobLink, "k-bob"), "bob"); code != http.StatusOK {
		t.Fatalf("bob's callback: %d %s", code, body)
	}
	as.SetTTL(t, 3600)
	before := as.Stats(t).Grants["refresh_token"]
	for range 2 {
		if text, _ := testenv.RawResultText(whoami(bob)); text != "sub=bob" {
			t.Fatalf("bob: %q", text)
		}
		if text, _ := testenv.RawResultText(whoami(alice)); text != "sub=alice" {
			t.Fatalf("alice: %q", text)
		}
	}
	if n := as.Stats(t).Grants["refresh_token"] - before; n < 1 {
		t.Errorf("bob's 30 s token was not refreshed (%d refresh grants)", n)
	}

	// The upstream refuses alice (HTTP 401): asked again.
	who.Deny("alice", true)
	if testenv.ElicitationURL(whoami(alice)) == "" {
		t.Error("alice after a 401 was not asked to connect again")
	}

	// Revoking bob's connection revokes his tokens at the server (RFC 7009).
	rev := as.Stats(t).Revocations
	req, _ := http.NewRequest(http.MethodDelete, front2+"/tool-rag/connections/who", nil)
	req.Header.Set("Authorization", "Bearer k-bob")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"revoked":true`) {
		t.Fatalf("revoke: %d %s", resp.StatusCode, body)
	}
	if n := as.Stats(t).Revocations - rev; n < 1 {
		t.Errorf("revocation requests: %d", n)
	}
	if testenv.ElicitationURL(whoami(bob)) == "" {
		t.Error("bob after revoking was not asked to connect again")
	}
	if logs := gw.logs.String() + gw2.logs.String(); strings.Contains(logs, catalog) {
		t.Error("a token reached the function logs")
	}
}
