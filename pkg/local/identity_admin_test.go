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

// The console's admin endpoints list who is connected to a per-principal
// server and revoke one principal's grant there, or all of theirs: admin
// keys only, and no answer ever carries a token.
func TestUpstreamIdentityAdminConnections(t *testing.T) {
	up := testenv.NewWhoServer(t, map[string]string{"svc-catalog": "catalog", "pat-alice": "alice", "pat-bob": "bob", "pat-carol": "carol"})
	dir := t.TempDir()
	registry := fmt.Sprintf("servers:\n  up:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer svc-catalog\"}\n    auth: {mode: user_secret}\n", up.URL+"/mcp")
	e := startGatewayWith(t, registry, identityKeys, map[string]string{"TOOL_RAG_VAULT_DB": filepath.Join(dir, "g.db"), "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "k")})
	sessions := map[string]*testenv.RawSession{}
	for _, who := range []string{"alice", "bob", "carol"} {
		s := rawConnect(t, e.url, "k-"+who, urlElicitation)
		sessions[who] = s
		link := testenv.ElicitationURL(s.CallTool("up__whoami", nil))
		if code, _ := testenv.PostForm(t, link, url.Values{"key": {"k-" + who}, "secret": {"pat-" + who}}); code != http.StatusOK {
			t.Fatalf("%s connecting: %d", who, code)
		}
	}
	admin := e.srv.URL + "/tool-rag/admin/connections"
	bob, carol := url.QueryEscape(principalOfKey("bob", "k-bob")), url.QueryEscape(principalOfKey("carol", "k-carol"))

	cases := []struct {
		name, method, query, key string
		code                     int
		want                     string // in the answer
	}{
		{"a non-admin lists", http.MethodGet, "server=up", "k-alice", http.StatusForbidden, "admin key"},
		{"the admin lists the server", http.MethodGet, "server=up", "k-root", http.StatusOK, "key_id:alice"},
		{"a server nobody connected", http.MethodGet, "server=echo", "k-root", http.StatusOK, "connections:[]"},
		{"a non-admin revokes", http.MethodDelete, "principal=" + bob + "&server=up", "k-alice", http.StatusForbidden, "admin key"},
		{"no principal named", http.MethodDelete, "server=up", "k-root", http.StatusBadRequest, "principal"},
		{"the admin revokes bob on up", http.MethodDelete, "principal=" + bob + "&server=up", "k-root", http.StatusOK, "revoked:1"},
		{"again: nothing left", http.MethodDelete, "principal=" + bob + "&server=up", "k-root", http.StatusOK, "revoked:0"},
		{"the admin revokes all of carol's", http.MethodDelete, "principal=" + carol, "k-root", http.StatusOK, "revoked:1"},
		{"the list after", http.MethodGet, "server=up", "k-root", http.StatusOK, "key_id:alice"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out := restJSON(t, c.method, admin+"?"+c.query, c.key, "")
			got := fmt.Sprint(out)
			if code != c.code || !strings.Contains(got, c.want) {
				t.Errorf("%s ?%s as %s: %d %s, want %d with %q", c.method, c.query, c.key, code, got, c.code, c.want)
			}
			if strings.Contains(got, "pat-") || strings.Contains(got, "svc-catalog") {
				t.Errorf("the answer carries a token: %s", got)
			}
		})
	}

	_, out := restJSON(t, http.MethodGet, admin+"?server=up", "k-root", "")
	if list, _ := out["connections"].([]any); len(list) != 1 || strings.Contains(fmt.Sprint(list), "bob") || strings.Contains(fmt.Sprint(list), "carol") {
		t.Errorf("connections after revoking bob and carol: %v", list)
	}
	if code, out := restJSON(t, http.MethodGet, e.srv.URL+"/tool-rag/admin/servers", "k-root", ""); code != 200 || !strings.Contains(fmt.Sprint(out["servers"]), "connected:1") {
		t.Errorf("connected count after revoking: %d %v", code, out)
	}
	// The revoked principals are asked to connect again; alice is not.
	for _, who := range []string{"bob", "carol"} {
		if testenv.ElicitationURL(sessions[who].CallTool("up__whoami", nil)) == "" {
			t.Errorf("%s after the admin revoked the grant was not asked to connect again", who)
		}
	}
	if got, _ := testenv.RawResultText(sessions["alice"].CallTool("up__whoami", nil)); got != "sub=alice" {
		t.Errorf("alice after the others were revoked: %q", got)
	}
}
