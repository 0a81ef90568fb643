package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// TestOAuthCognito: with oauth.cognito the stack creates the user pool, a
// resource server with its scopes, a hosted domain and a client
// credentials app client, and points the gateway at the pool: issuer, JWKS
// URL (no discovery at cold start), scope prefix (Cognito tokens carry no
// aud) and grants.
func TestOAuthCognito(t *testing.T) {
	cfg, err := LoadConfig("config.example.json")
	if err != nil {
		t.Fatal(err)
	}
	cfg.ServersFile = ""
	cfg.OAuth = &OAuthConfig{Cognito: &CognitoConfig{DomainPrefix: "toolrag-test"},
		Grants: json.RawMessage(`[{"match":{"scope":"toolrag/tools"},"servers":{"echo":{}}}]`)}
	r := synth(t, cfg, nil)
	for typ, n := range map[string]int{
		"AWS::Cognito::UserPool":               1,
		"AWS::Cognito::UserPoolResourceServer": 1,
		"AWS::Cognito::UserPoolDomain":         1,
		"AWS::Cognito::UserPoolClient":         1,
	} {
		if got := len(r.resources(typ)); got != n {
			t.Errorf("%d %s, want %d", got, typ, n)
		}
	}
	r.tmpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPoolResourceServer"), &map[string]any{
		"Identifier": "toolrag", "Scopes": []any{map[string]any{"ScopeName": "tools", "ScopeDescription": "toolrag gateway: tools"}},
	})
	r.tmpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPoolClient"), &map[string]any{
		"AllowedOAuthFlows": []any{"client_credentials"}, "GenerateSecret": true, "AllowedOAuthFlowsUserPoolClient": true,
	})
	for _, p := range r.resources("AWS::Cognito::UserPoolClient") {
		if sc := js(p["AllowedOAuthScopes"]); !strings.Contains(sc, "AgentsResourceServer") || !strings.Contains(sc, "/tools") {
			t.Errorf("app client scopes %s, want <resource server>/tools", sc)
		}
	}
	r.tmpl.HasResourceProperties(jsii.String("AWS::Cognito::UserPoolDomain"), &map[string]any{"Domain": "toolrag-test"})
	env := envOf(r.function(t, "GatewayFunction"))
	for k, want := range map[string]string{
		"TOOLRAG_OAUTH_SCOPE_PREFIX": `"toolrag/"`,
		"TOOLRAG_OAUTH_SCOPES":       `"toolrag/tools"`,
		"TOOLRAG_OAUTH_GRANTS":       `"[{\"match\":{\"scope\":\"toolrag/tools\"},\"servers\":{\"echo\":{}}}]"`,
	} {
		if got := js(env[k]); got != want {
			t.Errorf("%s = %s, want %s", k, got, want)
		}
	}
	if iss := js(env["TOOLRAG_OAUTH_ISSUER"]); !strings.Contains(iss, "ProviderURL") {
		t.Errorf("TOOLRAG_OAUTH_ISSUER = %s, want the user pool's provider URL", iss)
	}
	if jw := js(env["TOOLRAG_OAUTH_JWKS_URL"]); !strings.Contains(jw, "/.well-known/jwks.json") {
		t.Errorf("TOOLRAG_OAUTH_JWKS_URL = %s", jw)
	}
	outs := r.doc["Outputs"].(map[string]any)
	for _, o := range []string{"OAuthIssuer", "OAuthTokenEndpoint", "OAuthClientId"} {
		if outs[o] == nil {
			t.Errorf("no output %s", o)
		}
	}
	// No OAuth configured: no OAuth variables.
	plain, _ := LoadConfig("config.example.json")
	plain.ServersFile = ""
	for k := range envOf(synth(t, plain, nil).function(t, "GatewayFunction")) {
		if strings.HasPrefix(k, "TOOLRAG_OAUTH_") {
			t.Errorf("%s set without oauth", k)
		}
	}
}

func TestOAuthConfigErrors(t *testing.T) {
	grants := json.RawMessage(`[{"match":{"scope":"s"},"servers":{"echo":{}}}]`)
	for _, c := range []struct {
		name string
		o    OAuthConfig
		want string
	}{
		{"neither", OAuthConfig{Grants: grants}, "exactly one of issuer"},
		{"both", OAuthConfig{Issuer: "https://idp", Cognito: &CognitoConfig{}, Grants: grants}, "exactly one of issuer"},
		{"no audience", OAuthConfig{Issuer: "https://idp", Grants: grants}, "audience is required"},
		{"no grants", OAuthConfig{Issuer: "https://idp", Audience: "https://gw/mcp"}, "grants must be"},
		{"bad domain", OAuthConfig{Cognito: &CognitoConfig{DomainPrefix: "Bad_Prefix"}, Grants: grants}, "domainPrefix"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg, _ := LoadConfig("config.example.json")
			cfg.OAuth = &c.o
			cfg.Defaults()
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %v, want %q", err, c.want)
			}
		})
	}
}
