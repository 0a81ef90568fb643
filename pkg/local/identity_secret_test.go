package local

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/vault"
)

const identityKeys = `keys:
  - id: alice
    secret: "k-alice"
    servers: {up: {tool_prefixes: ["*"]}}
  - id: bob
    secret: "k-bob"
    servers: {up: {tool_prefixes: ["*"]}}
  - id: carol
    secret: "k-carol"
    servers: {up: {tool_prefixes: ["*"]}}
  - id: root
    secret: "k-root"
    admin: true
    servers: {up: {}}
`

func principalOfKey(id, secret string) string {
	return auth.KeyPrincipal(policy.Key{ID: id, SecretHash: policy.HashSecret(secret)})
}

var urlElicitation = map[string]any{"elicitation": map[string]any{"url": map[string]any{}}}

// Per-user secrets: each principal stores their own token through the
// connect link and reaches the upstream as themselves; the link refuses
// another principal and a replay; the vault rows hold no token bytes and
// do not open under another principal; a 401 asks again; revoke and key
// removal end the grant.
func TestUpstreamIdentityUserSecret(t *testing.T) {
	up := testenv.NewWhoServer(t, map[string]string{"svc-catalog": "catalog", "pat-alice": "alice", "pat-bob": "bob", "pat-carol": "carol"})
	dir := t.TempDir()
	vaultDB := filepath.Join(dir, "grants.db")
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer svc-catalog\"}\n    auth: {mode: user_secret}\n", up.URL+"/mcp")
	e := startGatewayWith(t, registry, identityKeys, map[string]string{"TOOL_RAG_VAULT_DB": vaultDB, "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "vault.key")})
	ctx := context.Background()
	rows := func() []vault.Row {
		t.Helper()
		s, err := vault.OpenSQLite(ctx, vaultDB)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		r, err := s.ListRows(ctx, "")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	bob := rawConnect(t, e.url, "k-bob", map[string]any{})

	// Unconnected: -32042 with the gateway's connect link.
	link := testenv.ElicitationURL(alice.CallTool("up__whoami", nil))
	if !strings.HasPrefix(link, e.srv.URL+"/connect/") {
		t.Fatalf("alice's first call: want -32042 with a connect link, got %q", link)
	}
	if calls := up.Calls(); calls["alice"]+calls[""] != 0 {
		t.Fatalf("the upstream was called without the caller's credential: %v", calls)
	}

	// The page is served to anyone; completing it only to alice.
	if resp, err := http.Get(link); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET link: %v %v", resp, err)
	}
	if code, body := testenv.PostForm(t, link, url.Values{"key": {"k-bob"}, "secret": {"pat-bob"}}); code != http.StatusForbidden || !strings.Contains(body, "issued to someone else") {
		t.Fatalf("bob opening alice's link: %d %s", code, body)
	}
	if code, _ := testenv.PostForm(t, link, url.Values{"key": {"wrong"}, "secret": {"pat-bob"}}); code != http.StatusUnauthorized {
		t.Fatalf("a wrong key opening the link: %d", code)
	}
	if n := len(rows()); n != 0 {
		t.Fatalf("refused link attempts stored %d rows", n)
	}
	if code, body := testenv.PostForm(t, link, url.Values{"key": {"k-alice"}, "secret": {"pat-alice"}}); code != http.StatusOK || !strings.Contains(body, "Stored") {
		t.Fatalf("alice completing her link: %d %s", code, body)
	}
	if code, body := testenv.PostForm(t, link, url.Values{"key": {"k-alice"}, "secret": {"pat-bob"}}); code != http.StatusGone || !strings.Contains(body, "already used") {
		t.Fatalf("replayed link: %d %s", code, body)
	}
	if got, isErr := testenv.RawResultText(alice.CallTool("up__whoami", nil)); isErr || got != "sub=alice" {
		t.Fatalf("alice after connecting: %q (error %v)", got, isErr)
	}

	// Bob's client has no URL elicitation: a tool error with his link.
	text, isErr := testenv.RawResultText(bob.CallTool("run_tool", map[string]any{"call_name": "up__whoami", "arguments": map[string]any{}}))
	i := strings.Index(text, e.srv.URL+"/connect/")
	if !isErr || i < 0 {
		t.Fatalf("bob's first call: %q", text)
	}
	bobLink := strings.Fields(text[i:])[0]
	if code, _ := testenv.PostForm(t, bobLink, url.Values{"key": {"k-bob"}, "secret": {"pat-bob"}}); code != http.StatusOK {
		t.Fatalf("bob completing his link: %d", code)
	}
	for range 3 {
		if got, _ := testenv.RawResultText(bob.CallTool("up__whoami", nil)); got != "sub=bob" {
			t.Fatalf("bob: %q", got)
		}
		if got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil)); got != "sub=alice" {
			t.Fatalf("alice: %q", got)
		}
	}

	// find_tools marks the server for a caller who has not connected it.
	carol := rawConnect(t, e.url, "k-carol", map[string]any{})
	found := carol.CallTool("find_tools", map[string]any{"query": "who am i: identity of the caller"})
	fb := fmt.Sprint(found["result"])
	if !strings.Contains(fb, "needs_connection:true") || !strings.Contains(fb, "connect_url:"+e.srv.URL+"/connect/") {
		t.Errorf("find_tools for carol does not mark the server: %s", fb)
	}
	found = alice.CallTool("find_tools", map[string]any{"query": "who am i: identity of the caller"})
	if fb := fmt.Sprint(found["result"]); strings.Contains(fb, "needs_connection") || !strings.Contains(fb, "up__whoami") {
		t.Errorf("find_tools for alice: %s", fb)
	}

	// The console counts the connected principals, never showing a grant.
	if code, out := restJSON(t, http.MethodGet, e.srv.URL+"/tool-rag/admin/servers", "k-root", ""); code != 200 ||
		!strings.Contains(fmt.Sprint(out["servers"]), "connected:2") || strings.Contains(fmt.Sprint(out), "pat-") {
		t.Errorf("console servers: %d %v", code, out)
	}

	// Raw rows: no token bytes; alice's row copied to carol does not open.
	all := rows()
	if len(all) != 2 {
		t.Fatalf("rows = %d, want 2", len(all))
	}
	var aliceRow vault.Row
	for _, r := range all {
		for _, tok := range []string{"pat-alice", "pat-bob"} {
			if bytes.Contains(r.Sealed, []byte(tok)) {
				t.Errorf("a vault row holds %s in clear", tok)
			}
		}
		if r.KeyID == "alice" {
			aliceRow = r
		}
	}
	s, _ := vault.OpenSQLite(ctx, vaultDB)
	moved := aliceRow
	moved.Principal, moved.KeyID = principalOfKey("carol", "k-carol"), "carol"
	if err := s.PutRow(ctx, moved); err != nil {
		t.Fatal(err)
	}
	s.Close()
	text, _ = testenv.RawResultText(carol.CallTool("up__whoami", nil))
	if i = strings.Index(text, e.srv.URL+"/connect/"); strings.Contains(text, "sub=alice") || i < 0 {
		t.Fatalf("carol with alice's copied row: %q", text)
	}
	if code, _ := testenv.PostForm(t, strings.Fields(text[i:])[0], url.Values{"key": {"k-carol"}, "secret": {"pat-carol"}}); code != http.StatusOK {
		t.Fatalf("carol connecting: %d", code)
	}
	if got, _ := testenv.RawResultText(carol.CallTool("up__whoami", nil)); got != "sub=carol" {
		t.Fatalf("carol: %q", got)
	}
	if n := up.Calls()["alice"]; n != 4 {
		t.Errorf("the upstream saw alice %d times, want 4", n)
	}

	// The upstream refuses bob's token: the grant is dropped and he is asked again.
	up.Set("pat-bob", "")
	if text, _ := testenv.RawResultText(bob.CallTool("up__whoami", nil)); !strings.Contains(text, e.srv.URL+"/connect/") {
		t.Errorf("bob after a 401: %q", text)
	}
	if code, out := restJSON(t, http.MethodGet, e.srv.URL+"/tool-rag/connections", "k-bob", ""); code != 200 || fmt.Sprint(out["connections"]) != "[]" {
		t.Errorf("bob's connections after a 401: %d %v", code, out)
	}

	// A principal lists and revokes their own connection.
	code, out := restJSON(t, http.MethodGet, e.srv.URL+"/tool-rag/connections", "k-alice", "")
	if cs := fmt.Sprint(out["connections"]); code != 200 || !strings.Contains(cs, "server:up") || strings.Contains(cs, "pat-alice") {
		t.Errorf("alice's connections: %d %v", code, out)
	}
	if code, out := restJSON(t, http.MethodDelete, e.srv.URL+"/tool-rag/connections/up", "k-alice", ""); code != 200 || out["revoked"] != true {
		t.Errorf("alice revoking: %d %v", code, out)
	}
	if testenv.ElicitationURL(alice.CallTool("up__whoami", nil)) == "" {
		t.Error("alice's call after revoking was not asked to connect again")
	}

	// Admin revocation needs an admin key.
	if code, _ := restJSON(t, http.MethodDelete, e.srv.URL+"/tool-rag/connections?key_id=carol", "k-alice", ""); code != http.StatusForbidden {
		t.Errorf("a non-admin revoking another key: %d", code)
	}
	if code, out := restJSON(t, http.MethodDelete, e.srv.URL+"/tool-rag/connections?key_id=carol", "k-root", ""); code != 200 || out["revoked"] != float64(1) {
		t.Errorf("admin revoking carol: %d %v", code, out)
	}
	if text, _ := testenv.RawResultText(carol.CallTool("up__whoami", nil)); !strings.Contains(text, "/connect/") {
		t.Errorf("carol after the admin revoked her connection: %q", text)
	}

	// Removing a key ends its connections.
	link = testenv.ElicitationURL(alice.CallTool("up__whoami", nil))
	if code, _ := testenv.PostForm(t, link, url.Values{"key": {"k-alice"}, "secret": {"pat-alice"}}); code != http.StatusOK {
		t.Fatalf("alice reconnecting: %d", code)
	}
	if len(rows()) != 1 {
		t.Fatalf("rows before removing alice's key: %d", len(rows()))
	}
	keysPath := filepath.Join(filepath.Dir(e.g.Env.KeysPath), "keys.yaml")
	without := strings.Replace(identityKeys, "  - id: alice\n    secret: \"k-alice\"\n    servers: {up: {tool_prefixes: [\"*\"]}}\n", "", 1)
	if err := os.WriteFile(keysPath, []byte(without), 0o644); err != nil {
		t.Fatal(err)
	}
	if !e.g.reloadKeys() {
		t.Fatal("keys did not reload")
	}
	if n := len(rows()); n != 0 {
		t.Errorf("rows after removing alice's key: %d", n)
	}
}

// A per-user server with no catalog credential: its tools are unknown
// until someone connects (through POST /tool-rag/connections/{server});
// then the gateway lists them with that grant, and every other caller
// still reaches the server only as themselves.
func TestUpstreamIdentityNoCatalogCredential(t *testing.T) {
	up := testenv.NewWhoServer(t, map[string]string{"pat-alice": "alice", "pat-bob": "bob"})
	dir := t.TempDir()
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n    auth: {mode: user_secret}\n", up.URL+"/mcp")
	e := startGatewayWith(t, registry, identityKeys, map[string]string{"TOOL_RAG_VAULT_DB": filepath.Join(dir, "g.db"), "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "k")})
	alice := rawConnect(t, e.url, "k-alice", urlElicitation)
	bob := rawConnect(t, e.url, "k-bob", urlElicitation)
	if msg := fmt.Sprint(alice.CallTool("up__whoami", nil)); !strings.Contains(msg, "not found") {
		t.Fatalf("before anyone connected: %s", msg)
	}
	req, _ := http.NewRequest(http.MethodPost, e.srv.URL+"/tool-rag/connections/up", nil)
	req.Header.Set("Authorization", "Bearer k-alice")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	if !strings.HasPrefix(out["connect_url"], e.srv.URL+"/connect/") {
		t.Fatalf("POST /tool-rag/connections/up: %d %v", resp.StatusCode, out)
	}
	if code, _ := testenv.PostForm(t, out["connect_url"], url.Values{"key": {"k-alice"}, "secret": {"pat-alice"}}); code != http.StatusOK {
		t.Fatalf("alice connecting: %d", code)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		got, _ := testenv.RawResultText(alice.CallTool("up__whoami", nil))
		if got == "sub=alice" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the server's tools did not appear after alice connected: %q", got)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if testenv.ElicitationURL(bob.CallTool("up__whoami", nil)) == "" {
		t.Error("bob reached the server without connecting it")
	}
	if calls := up.Calls(); calls["bob"] != 0 || calls["alice"] != 1 {
		t.Errorf("upstream calls: %v", calls)
	}
}
