package awsrt

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/oauth"
)

// TestLambdaOAuth: the gateway function configured through TOOLRAG_OAUTH_*
// accepts access tokens of a real authorization server beside the API
// keys, through the Lambda event path; 401s name the resource metadata,
// which the function serves; the issuer's keys are fetched once and reused
// by every warm invocation.
func TestLambdaOAuth(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.sync(t, string(event(t, "schedule-sync.json", request{})))
	as := testenv.StartAuthServer(t)
	const resource = "https://gw.example.com/mcp"
	env := map[string]string{
		"TOOLRAG_OAUTH_ISSUER":   as.Issuer,
		"TOOLRAG_OAUTH_AUDIENCE": resource,
		"TOOLRAG_OAUTH_SCOPES":   "mcp.tools",
		"TOOLRAG_OAUTH_GRANTS":   `[{"match":{"scope":"mcp.tools"},"servers":{"echo":{}}}]`,
	}
	ocfg, err := oauth.FromEnv(func(k string) string { return env[k] })
	if err != nil || ocfg == nil {
		t.Fatalf("oauth.FromEnv: %v", err)
	}
	g := e.gateway(t, func(c *Config) { c.OAuth = ocfg; c.Now = nil })
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	token := as.Token(t, "lambda-agent", url.Values{"scope": {"mcp.tools"}, "resource": {resource}})

	for i := range 3 { // cold, then warm invocations
		sid := initialize(t, h, "http-api-initialize.json", token)
		f, _ := findTools(t, h, token, sid, "reverse a string")
		if len(f.names()) == 0 || f.names()[0] != "echo__reverse" {
			t.Fatalf("invocation %d: find_tools with a token found %v", i, f.names())
		}
	}
	if n := g.oauth.JWKSFetches(); n != 1 {
		t.Errorf("%d JWKS fetches over three warm invocations, want 1", n)
	}
	// The API keys keep working.
	initialize(t, h, "http-api-initialize.json", agentSecret)

	r := invoke(t, h, event(t, "http-api-tools-list.json", request{auth: "not-a-key"}))
	want := `resource_metadata="https://gw.example.com/.well-known/oauth-protected-resource/mcp"`
	if r.status != http.StatusUnauthorized || !strings.Contains(r.header("WWW-Authenticate"), want) ||
		!strings.Contains(r.header("WWW-Authenticate"), `error="invalid_token"`) {
		t.Errorf("401: %d %q %q", r.status, r.header("WWW-Authenticate"), r.body)
	}
	expired := as.Token(t, "lambda-agent", url.Values{"scope": {"mcp.tools"}, "resource": {resource}, "x_exp": {"-600"}})
	r = invoke(t, h, event(t, "http-api-tools-list.json", request{auth: expired}))
	if r.status != http.StatusUnauthorized || !strings.Contains(r.body, "expired") {
		t.Errorf("expired token: %d %q", r.status, r.body)
	}

	r = invoke(t, h, event(t, "http-api-health.json", request{method: "GET", path: oauth.WellKnown + "/mcp"}))
	var md struct {
		Resource             string   `json:"resource"`
		AuthorizationServers []string `json:"authorization_servers"`
		Scopes               []string `json:"scopes_supported"`
	}
	if r.status != 200 || json.Unmarshal([]byte(r.body), &md) != nil || md.Resource != resource ||
		len(md.AuthorizationServers) != 1 || md.AuthorizationServers[0] != as.Issuer || len(md.Scopes) != 1 {
		t.Errorf("metadata: %d %s", r.status, r.body)
	}
}
