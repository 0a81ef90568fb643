package testenv

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// AuthServer is a real OAuth 2 authorization server (npm
// oauth2-mock-server) on 127.0.0.1, started by StartAuthServer.
type AuthServer struct {
	Issuer  string
	control string
}

// StartAuthServer starts the authorization server (authserver.mjs) with
// Node 22; it stops with the test.
func StartAuthServer(t testing.TB) *AuthServer {
	t.Helper()
	return startAuthServer(t, t.Cleanup)
}

// StartAuthServerShared starts an authorization server that lives until
// the test binary exits (the package's TestMain must call Main).
func StartAuthServerShared(t testing.TB) *AuthServer {
	t.Helper()
	return startAuthServer(t, registerAtExit)
}

func startAuthServer(t testing.TB, cleanup func(func())) *AuthServer {
	t.Helper()
	NPMModule(t, "oauth2-mock-server")
	var v struct{ Issuer, Control string }
	startNode(t, cleanup, "the authorization server", 30*time.Second, &v, "authserver.mjs")
	return &AuthServer{Issuer: v.Issuer, control: v.Control}
}

// Token asks the token endpoint for a client credentials token; extra
// holds resource, scope and the test-only x_* fields of authserver.mjs.
func (a *AuthServer) Token(t testing.TB, clientID string, extra url.Values) string {
	t.Helper()
	form := url.Values{"grant_type": {"client_credentials"}}
	for k, v := range extra {
		form[k] = v
	}
	req, _ := http.NewRequest(http.MethodPost, a.Issuer+"/token", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(clientID, "secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		AccessToken string `json:"access_token"`
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil || out.AccessToken == "" {
		t.Fatalf("token endpoint: HTTP %d %s", resp.StatusCode, body)
	}
	return out.AccessToken
}

func (a *AuthServer) call(t testing.TB, path string, in any, out any) {
	t.Helper()
	b, _ := json.Marshal(in)
	resp, err := http.Post(a.control+path, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("authorization server %s: HTTP %d %s", path, resp.StatusCode, body)
	}
	if out != nil {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatal(err)
		}
	}
}

// Rotate adds a new RS256 signing key with the id kid to the server's JWKS.
func (a *AuthServer) Rotate(t testing.TB, kid string) { a.RotateAlg(t, kid, "RS256") }

// RotateAlg adds a new signing key for alg (RS256, ES256, EdDSA...).
func (a *AuthServer) RotateAlg(t testing.TB, kid, alg string) {
	a.call(t, "/rotate", map[string]string{"kid": kid, "alg": alg}, nil)
}

// Sign builds a token signed with the key kid carrying claims (iss, iat,
// exp and nbf are set by the server unless claims override them).
func (a *AuthServer) Sign(t testing.TB, kid string, claims map[string]any) string {
	var out struct{ Token string }
	a.call(t, "/sign", map[string]any{"kid": kid, "claims": claims}, &out)
	return out.Token
}

// NextIntrospection sets the body of the next introspection answer.
func (a *AuthServer) NextIntrospection(t testing.TB, body map[string]any) {
	a.call(t, "/introspect-next", body, nil)
}

// Introspections counts the introspection requests the server answered.
func (a *AuthServer) Introspections(t testing.TB) int {
	var out struct{ Introspections int }
	a.call(t, "/stats", struct{}{}, &out)
	return out.Introspections
}

// AuthStats is what the authorization server counted.
type AuthStats struct {
	Introspections int
	Grants         map[string]int // token requests per grant_type
	Revocations    int
}

// Stats returns the server's counts.
func (a *AuthServer) Stats(t testing.TB) AuthStats {
	var out AuthStats
	a.call(t, "/stats", struct{}{}, &out)
	return out
}

// SetTTL sets the lifetime of the access tokens of later authorization
// code and refresh grants.
func (a *AuthServer) SetTTL(t testing.TB, seconds int) {
	a.call(t, "/ttl", map[string]int{"seconds": seconds}, nil)
}
