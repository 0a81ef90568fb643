package oauth

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// server is a gateway stand-in: the real auth middleware and metadata
// routes in front of a handler that reports the policy it was given.
func server(t *testing.T, res *Resource) *httptest.Server {
	t.Helper()
	keys := auth.NewStaticKeys([]policy.Key{{ID: "dev-full", SecretHash: policy.HashSecret("dev-key-full"), Servers: map[string]policy.Rule{"echo": {}}}})
	mux := http.NewServeMux()
	res.Routes(mux)
	who := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := policy.FromContext(r.Context())
		ids, _ := p.Servers()
		json.NewEncoder(w).Encode(map[string]any{"key": p.KeyID, "admin": p.Admin, "servers": ids})
	})
	cfg := auth.Config{Keys: keys, Tokens: res.Tokens(), Challenge: res.Challenge(), Counters: &auth.Counters{}}
	mux.Handle("/mcp", auth.Middleware(cfg, who))
	mux.Handle("/tool-rag/", auth.Middleware(cfg, who))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func get(t *testing.T, method, u, bearer string) (int, http.Header, string) {
	t.Helper()
	req, _ := http.NewRequest(method, u, strings.NewReader("{}"))
	if bearer != "" {
		req.Header.Set("Authorization", "Bearer "+bearer)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// TestAPIKeyModeSaysSo: without OAuth, every 401 points at the metadata
// document, and the document and the registration endpoint OAuth clients
// try next both say that this gateway takes API keys and how to get one.
func TestAPIKeyModeSaysSo(t *testing.T) {
	srv := server(t, &Resource{MCPPath: "/mcp", KeyHelp: "Ask ops for a key."})
	wantMeta := srv.URL + WellKnown + "/mcp"
	for _, c := range []struct{ name, path, bearer, code string }{
		{"no credentials", "/mcp", "", ""},
		{"wrong key", "/mcp", "not-a-key", "invalid_token"},
		{"REST, wrong key", "/tool-rag/retrieve", "not-a-key", "invalid_token"},
		{"a JWT of no configured issuer", "/mcp", b64(map[string]string{"alg": "RS256"}) + "." + b64(map[string]string{"iss": "https://idp.example.com"}) + ".c2ln", "invalid_token"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := get(t, "POST", srv.URL+c.path, c.bearer)
			if status != 401 {
				t.Fatalf("status %d", status)
			}
			ch := h.Get("WWW-Authenticate")
			if !strings.HasPrefix(ch, "Bearer ") || !strings.Contains(ch, `resource_metadata="`+wantMeta+`"`) {
				t.Errorf("challenge %q lacks resource_metadata=%q", ch, wantMeta)
			}
			if got := strings.Contains(ch, `error="invalid_token"`); got != (c.code != "") {
				t.Errorf("challenge %q: invalid_token=%v", ch, got)
			}
			if !strings.Contains(body, "API key") || !strings.Contains(body, "Ask ops for a key.") {
				t.Errorf("401 body %q does not say how to get an API key", body)
			}
		})
	}
	for _, p := range []string{WellKnown, WellKnown + "/mcp"} {
		status, h, body := get(t, "GET", srv.URL+p, "")
		var md map[string]any
		if status != 200 || json.Unmarshal([]byte(body), &md) != nil {
			t.Fatalf("%s: %d %s", p, status, body)
		}
		if md["resource"] != srv.URL+"/mcp" || md["authorization_servers"] != nil || h.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %s", p, body)
		}
		if d, _ := md["description"].(string); !strings.Contains(d, "takes API keys") || !strings.Contains(d, "Ask ops for a key.") {
			t.Errorf("%s: description %q", p, d)
		}
	}
	status, _, body := get(t, "POST", srv.URL+"/register", "")
	var reg map[string]string
	if status != 400 || json.Unmarshal([]byte(body), &reg) != nil || reg["error"] != "invalid_client_metadata" ||
		!strings.Contains(reg["error_description"], "takes API keys") {
		t.Errorf("registration: %d %s", status, body)
	}
	// The API key itself works.
	if status, _, body := get(t, "POST", srv.URL+"/mcp", "dev-key-full"); status != 200 || !strings.Contains(body, `"key":"dev-full"`) {
		t.Errorf("API key: %d %s", status, body)
	}
}

// TestOAuthMode: tokens and API keys side by side through the real auth
// middleware; the metadata names the authorization server.
func TestOAuthMode(t *testing.T) {
	as := authServer(t)
	cfg := testConfig(as.Issuer)
	cfg.ScopesSupported = []string{"tools", "files"}
	v := newValidator(t, cfg)
	res := &Resource{MCPPath: "/mcp"}
	res.v.Store(v)
	srv := server(t, res)
	aud := url.Values{"resource": {testAudience}}

	status, _, body := get(t, "GET", srv.URL+WellKnown+"/mcp", "")
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
		Bearer               []string `json:"bearer_methods_supported"`
	}
	if status != 200 || json.Unmarshal([]byte(body), &md) != nil {
		t.Fatalf("metadata: %d %s", status, body)
	}
	if md.Resource != testAudience || len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != as.Issuer ||
		strings.Join(md.Scopes, " ") != "tools files" || strings.Join(md.Bearer, ",") != "header" {
		t.Errorf("metadata %s", body)
	}
	if status, _, _ := get(t, "POST", srv.URL+"/register", ""); status == 400 {
		t.Error("with OAuth configured the gateway must not answer registration itself")
	}
	wantMeta := `resource_metadata="http://127.0.0.1:8765` + WellKnown + `/mcp"`

	tok := func(client string, kv ...string) string {
		f := form(kv...)
		for k, x := range aud {
			if f.Get(k) == "" {
				f[k] = x
			}
		}
		return as.Token(t, client, f)
	}
	cases := []struct {
		name, bearer string
		status       int
		challenge    string
		body         string
	}{
		{"token", tok("agent-1", "scope", "tools"), 200, "", `"key":"oauth:sub:agent-1"`},
		{"admin token", tok("agent-2", "x_groups", "ops"), 200, "", `"admin":true`},
		{"API key alongside", "dev-key-full", 200, "", `"key":"dev-full"`},
		{"no credentials", "", 401, "Bearer realm", "OAuth access token from " + as.Issuer},
		{"expired token", tok("agent-1", "scope", "tools", "x_exp", "-3600"), 401, `error="invalid_token"`, "expired"},
		{"wrong audience", tok("agent-1", "scope", "tools", "resource", "http://127.0.0.1:1/mcp"), 401, `error="invalid_token"`, "not for this resource"},
		{"wrong issuer", tok("agent-1", "scope", "tools", "x_iss", "http://127.0.0.1:2"), 401, `error="invalid_token"`, "issued by"},
		{"no grant", tok("nobody", "scope", "other"), 403, `error="insufficient_scope", scope="tools files"`, "no grant"},
		{"unknown key", "nope", 401, `error="invalid_token"`, "invalid API key"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, h, body := get(t, "POST", srv.URL+"/mcp", c.bearer)
			if status != c.status || !strings.Contains(body, c.body) {
				t.Fatalf("%d %s, want %d with %q", status, body, c.status, c.body)
			}
			ch := h.Get("WWW-Authenticate")
			if c.status != 200 && (!strings.Contains(ch, c.challenge) || !strings.Contains(ch, wantMeta)) {
				t.Errorf("challenge %q, want %q and %s", ch, c.challenge, wantMeta)
			}
			if c.bearer != "" && strings.Contains(body, c.bearer) {
				t.Error("the response repeats the token")
			}
		})
	}
}
