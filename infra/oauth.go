package main

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awscognito"
	"github.com/aws/jsii-runtime-go"
)

// OAuthConfig makes the gateway an OAuth 2.1 resource server beside its
// API keys (docs/oauth.md): tokens of Issuer whose claims match a grant.
// With Cognito set, the stack creates the authorization server itself.
type OAuthConfig struct {
	Issuer      string          `json:"issuer,omitempty"`      // e.g. https://login.example.com/realms/agents
	Audience    string          `json:"audience,omitempty"`    // this gateway's MCP URL (RFC 8707)
	JwksURL     string          `json:"jwksUrl,omitempty"`     // default: from the issuer's metadata
	Scopes      []string        `json:"scopes,omitempty"`      // advertised in the resource metadata
	ScopePrefix string          `json:"scopePrefix,omitempty"` // accept aud-less tokens with a scope under it
	Grants      json.RawMessage `json:"grants"`                // [{"match":{"scope":...},"servers":{...},"admin":false}]
	Cognito     *CognitoConfig  `json:"cognito,omitempty"`
}

// CognitoConfig creates a Cognito user pool as the authorization server: a
// resource server with scopes, a hosted domain for its token endpoint, and
// one app client for machine agents (client credentials grant).
type CognitoConfig struct {
	// DomainPrefix is the hosted domain <prefix>.auth.<region>.amazoncognito.com
	// (globally unique; default toolrag-<stage>-<account>).
	DomainPrefix string `json:"domainPrefix,omitempty"`
	// ResourceServer is the resource server identifier (default "toolrag");
	// its scopes are "<identifier>/<scope>".
	ResourceServer string `json:"resourceServer,omitempty"`
	// Scopes of the resource server (default ["tools"]).
	Scopes []string `json:"scopes,omitempty"`
}

var domainPrefixPattern = regexp.MustCompile(`^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$`)

func (o *OAuthConfig) defaults() {
	if c := o.Cognito; c != nil {
		if c.ResourceServer == "" {
			c.ResourceServer = "toolrag"
		}
		if len(c.Scopes) == 0 {
			c.Scopes = []string{"tools"}
		}
	}
}

func (o *OAuthConfig) validate() []error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("oauth: "+format, args...)) }
	if (o.Issuer == "") == (o.Cognito == nil) {
		bad("set exactly one of issuer (your identity provider) or cognito (create a user pool)")
	}
	if o.Cognito == nil && o.Audience == "" && o.ScopePrefix == "" {
		bad("audience is required: the gateway's MCP URL (McpUrl output, or your custom domain)")
	}
	var grants []map[string]any
	if err := json.Unmarshal(o.Grants, &grants); err != nil || len(grants) == 0 {
		bad("grants must be a non-empty list like [{\"match\":{\"scope\":\"toolrag/tools\"},\"servers\":{\"echo\":{}}}]")
	}
	if c := o.Cognito; c != nil && c.DomainPrefix != "" && !domainPrefixPattern.MatchString(c.DomainPrefix) {
		bad("cognito.domainPrefix %q must be lower-case letters, digits and dashes", c.DomainPrefix)
	}
	return errs
}

// addOAuth sets the gateway's TOOLRAG_OAUTH_* environment with setEnv
// and, with Cognito, creates the user pool, resource server, domain and
// app client.
func addOAuth(stack awscdk.Stack, cfg Config, setEnv func(key string, value *string)) {
	o := cfg.OAuth
	if o == nil {
		return
	}
	env := func(k, v string) {
		if v != "" {
			setEnv(k, jsii.String(v))
		}
	}
	env("TOOLRAG_OAUTH_AUDIENCE", o.Audience)
	env("TOOLRAG_OAUTH_SCOPE_PREFIX", o.ScopePrefix)
	env("TOOLRAG_OAUTH_GRANTS", string(o.Grants))
	scopes := o.Scopes
	if c := o.Cognito; c != nil {
		pool := awscognito.NewUserPool(stack, jsii.String("AgentsUserPool"), &awscognito.UserPoolProps{
			UserPoolName:      jsii.String("toolrag-" + cfg.Stage),
			SelfSignUpEnabled: jsii.Bool(false),
			RemovalPolicy:     awscdk.RemovalPolicy_DESTROY,
		})
		var rsScopes []awscognito.ResourceServerScope
		var oauthScopes []awscognito.OAuthScope
		rs := awscognito.NewUserPoolResourceServer(stack, jsii.String("AgentsResourceServer"), &awscognito.UserPoolResourceServerProps{
			UserPool: pool, Identifier: jsii.String(c.ResourceServer), UserPoolResourceServerName: jsii.String("toolrag gateway"),
			Scopes: func() *[]awscognito.ResourceServerScope {
				for _, s := range c.Scopes {
					rsScopes = append(rsScopes, awscognito.NewResourceServerScope(&awscognito.ResourceServerScopeProps{
						ScopeName: jsii.String(s), ScopeDescription: jsii.String("toolrag gateway: " + s)}))
				}
				return &rsScopes
			}(),
		})
		for _, s := range rsScopes {
			oauthScopes = append(oauthScopes, awscognito.OAuthScope_ResourceServer(rs, s))
		}
		prefix := c.DomainPrefix
		if prefix == "" {
			prefix = strings.ToLower("toolrag-" + cfg.Stage + "-" + *stack.Account())
		}
		domain := pool.AddDomain(jsii.String("AgentsDomain"), &awscognito.UserPoolDomainOptions{
			CognitoDomain: &awscognito.CognitoDomainOptions{DomainPrefix: jsii.String(prefix)},
		})
		client := pool.AddClient(jsii.String("MachineAgentClient"), &awscognito.UserPoolClientOptions{
			UserPoolClientName: jsii.String("toolrag-machine-agents"),
			GenerateSecret:     jsii.Bool(true),
			OAuth: &awscognito.OAuthSettings{
				Flows:  &awscognito.OAuthFlows{ClientCredentials: jsii.Bool(true)},
				Scopes: &oauthScopes,
			},
		})
		issuer := pool.UserPoolProviderUrl()
		setEnv("TOOLRAG_OAUTH_ISSUER", issuer)
		// The JWKS URL is known: no discovery round trip at cold start.
		setEnv("TOOLRAG_OAUTH_JWKS_URL", awscdk.Fn_Join(jsii.String(""), &[]*string{issuer, jsii.String("/.well-known/jwks.json")}))
		if o.ScopePrefix == "" {
			// Cognito access tokens carry no aud: their scopes name the resource server.
			env("TOOLRAG_OAUTH_SCOPE_PREFIX", c.ResourceServer+"/")
		}
		if len(scopes) == 0 {
			for _, s := range c.Scopes {
				scopes = append(scopes, c.ResourceServer+"/"+s)
			}
		}
		out := func(id string, v *string, desc string) {
			awscdk.NewCfnOutput(stack, jsii.String(id), &awscdk.CfnOutputProps{Value: v, Description: jsii.String(desc)})
		}
		out("OAuthIssuer", issuer, "TOOLRAG_OAUTH_ISSUER (Cognito user pool)")
		out("OAuthTokenEndpoint", awscdk.Fn_Join(jsii.String(""), &[]*string{domain.BaseUrl(nil), jsii.String("/oauth2/token")}),
			"client credentials token endpoint")
		out("OAuthClientId", client.UserPoolClientId(), "machine agent app client (its secret: aws cognito-idp describe-user-pool-client)")
		out("OAuthUserPoolId", pool.UserPoolId(), "Cognito user pool")
	} else {
		env("TOOLRAG_OAUTH_ISSUER", o.Issuer)
		env("TOOLRAG_OAUTH_JWKS_URL", o.JwksURL)
	}
	env("TOOLRAG_OAUTH_SCOPES", strings.Join(scopes, ","))
}
