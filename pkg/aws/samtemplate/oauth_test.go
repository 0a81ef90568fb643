package samtemplate

import (
	"strings"
	"testing"
)

// TestOAuthParameters: the OAuth parameters reach the gateway's
// environment, and CreateCognito creates the user pool, the resource
// server, the domain and a client credentials app client, all under the
// Cognito condition, with the gateway pointed at the pool.
func TestOAuthParameters(t *testing.T) {
	tmpl := load(t)
	for _, p := range []string{"OAuthIssuer", "OAuthAudience", "OAuthJwksUrl", "OAuthScopes", "OAuthScopePrefix", "OAuthGrants", "CreateCognito", "CognitoDomainPrefix"} {
		if _, ok := tmpl.Parameters[p]; !ok {
			t.Errorf("parameter %s missing", p)
		}
	}
	var gw Function
	for _, f := range tmpl.Functions() {
		if f.Name() == "gateway" {
			gw = f
		}
	}
	want := map[string]string{
		"TOOLRAG_OAUTH_ISSUER":       `{"Fn::If":["Cognito",{"Fn::GetAtt":["AgentsUserPool","ProviderURL"]},{"Ref":"OAuthIssuer"}]}`,
		"TOOLRAG_OAUTH_AUDIENCE":     `{"Ref":"OAuthAudience"}`,
		"TOOLRAG_OAUTH_GRANTS":       `{"Ref":"OAuthGrants"}`,
		"TOOLRAG_OAUTH_SCOPE_PREFIX": `{"Fn::If":["Cognito","toolrag/",{"Ref":"OAuthScopePrefix"}]}`,
	}
	for k, v := range want {
		if got := js(gw.Env[k]); got != v {
			t.Errorf("gateway %s = %s, want %s", k, got, v)
		}
	}
	if got := js(gw.Env["TOOLRAG_OAUTH_JWKS_URL"]); !strings.Contains(got, "/.well-known/jwks.json") {
		t.Errorf("TOOLRAG_OAUTH_JWKS_URL = %s", got)
	}
	for id, typ := range map[string]string{
		"AgentsUserPool": "AWS::Cognito::UserPool", "AgentsResourceServer": "AWS::Cognito::UserPoolResourceServer",
		"AgentsDomain": "AWS::Cognito::UserPoolDomain", "MachineAgentClient": "AWS::Cognito::UserPoolClient",
	} {
		r, ok := tmpl.Resources[id]
		if !ok || r.Type != typ || r.Condition != "Cognito" {
			t.Errorf("%s: %+v, want %s under condition Cognito", id, r, typ)
		}
	}
	c := tmpl.Resources["MachineAgentClient"].Properties
	if js(c["AllowedOAuthFlows"]) != `["client_credentials"]` || js(c["AllowedOAuthScopes"]) != `["toolrag/tools"]` || c["GenerateSecret"] != true {
		t.Errorf("app client: %s", js(c))
	}
	rs := tmpl.Resources["AgentsResourceServer"].Properties
	if rs["Identifier"] != "toolrag" || !strings.Contains(js(rs["Scopes"]), `"ScopeName":"tools"`) {
		t.Errorf("resource server: %s", js(rs))
	}
}
