package testenv

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestWhoServer(t *testing.T) {
	w := NewWhoServer(t, map[string]string{"tok-a": "alice"})
	w.Issuer = "https://issuer.test"
	whoami := func(tok string) (string, error) {
		c, _, err := Dial(w.URL+"/mcp", MCPClient{Key: tok})
		if err != nil {
			return "", err
		}
		defer c.Close()
		res, err := CallTool(c, 10*time.Second, "whoami", nil)
		return Text(res), err
	}
	w.Set("tok-b", "bob")
	if got, err := whoami("tok-a"); err != nil || got != "sub=alice" {
		t.Fatalf("alice: %q %v", got, err)
	}
	if got, err := whoami("tok-b"); err != nil || got != "sub=bob" {
		t.Fatalf("bob: %q %v", got, err)
	}
	w.Deny("alice", true)
	w.Set("tok-b", "")
	for _, tok := range []string{"tok-a", "tok-b", "", "other"} {
		if _, err := whoami(tok); err == nil {
			t.Errorf("token %q was accepted", tok)
		}
	}
	if calls, seen := w.Calls(), w.Seen(); calls["alice"] != 1 || calls["bob"] != 1 || len(seen) != 2 || seen["alice"] != "tok-a" {
		t.Errorf("calls %v, seen %v", calls, seen)
	}

	resp, err := http.Get(w.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if ch := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized || !strings.Contains(ch, `resource_metadata="`+w.URL+`/.well-known/oauth-protected-resource"`) {
		t.Errorf("no token: %d %q", resp.StatusCode, ch)
	}
	resp, err = http.Get(w.URL + "/.well-known/oauth-protected-resource/mcp")
	if err != nil {
		t.Fatal(err)
	}
	var meta struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
	}
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || meta.Resource != w.URL+"/mcp" || len(meta.AuthorizationServers) != 1 || meta.AuthorizationServers[0] != w.Issuer {
		t.Errorf("metadata: %+v %v", meta, err)
	}
}
