package oauth

import (
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

func TestParseKeysFile(t *testing.T) {
	env := map[string]string{"INTRO_SECRET": "s3"}
	getenv := func(k string) string { return env[k] }
	good := `keys:
  - id: a
    secret: x
oauth:
  issuer: https://idp.example.com/realms/agents
  audience: https://gw.example.com/mcp
  clock_skew: 45s
  introspection: {url: https://idp.example.com/introspect, client_id: gw, client_secret: "${INTRO_SECRET}"}
  grants:
    - match: {scope: mcp.tools}
      servers: {echo: {tool_prefixes: [echo]}}
      rate_limit: {rate: 5, burst: 10}
`
	c, err := ParseKeysFile("keys.yaml", []byte(good), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if c.Issuer != "https://idp.example.com/realms/agents" || time.Duration(c.ClockSkew) != 45*time.Second ||
		c.Introspection.ClientSecret != "s3" || len(c.Grants) != 1 || c.Grants[0].RateLimit != (policy.RateLimit{Rate: 5, Burst: 10}) ||
		len(c.Algorithms) != len(defaultAlgorithms) || time.Duration(c.RefetchInterval) != 30*time.Second {
		t.Errorf("parsed %+v", c)
	}
	if c, err := ParseKeysFile("keys.yaml", []byte("keys: []\n"), getenv); c != nil || err != nil {
		t.Errorf("no oauth section: %v %v", c, err)
	}
	for _, bad := range []struct{ name, yaml, want string }{
		{"misspelt field", "oauth:\n  isuer: https://x\n", "field isuer not found"},
		{"no issuer", "oauth:\n  audience: https://gw/mcp\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", "issuer is required"},
		{"http issuer off loopback", "oauth:\n  issuer: http://idp.example.com\n  audience: a\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", "must use https"},
		{"no audience", "oauth:\n  issuer: https://idp\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", "audience is required"},
		{"alg none", "oauth:\n  issuer: https://idp\n  audience: a\n  algorithms: [none]\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", `"none" is not allowed`},
		{"HS256", "oauth:\n  issuer: https://idp\n  audience: a\n  algorithms: [HS256]\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", `"HS256" is not allowed`},
		{"no grants", "oauth:\n  issuer: https://idp\n  audience: a\n", "at least one grant"},
		{"empty match", "oauth:\n  issuer: https://idp\n  audience: a\n  grants: [{match: {}, servers: {echo: {}}}]\n", "match needs"},
		{"bad server id", "oauth:\n  issuer: https://idp\n  audience: a\n  grants: [{match: {scope: s}, servers: {\"bad id\": {}}}]\n", "servers"},
		{"unset secret", "oauth:\n  issuer: https://idp\n  audience: a\n  introspection: {client_id: c, client_secret: \"${NOPE}\"}\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", "NOPE is not set"},
		{"skew too large", "oauth:\n  issuer: https://idp\n  audience: a\n  clock_skew: 1h\n  grants: [{match: {scope: s}, servers: {echo: {}}}]\n", "at most 5m"},
	} {
		t.Run(bad.name, func(t *testing.T) {
			_, err := ParseKeysFile("keys.yaml", []byte(bad.yaml), getenv)
			if err == nil || !strings.Contains(err.Error(), bad.want) || !strings.Contains(err.Error(), "keys.yaml") {
				t.Errorf("error %v, want one naming keys.yaml and %q", err, bad.want)
			}
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	getenv := func(k string) string { return env[k] }
	if c, err := FromEnv(getenv); c != nil || err != nil {
		t.Fatalf("unset: %v %v", c, err)
	}
	env["TOOLRAG_OAUTH_ISSUER"] = "https://cognito-idp.us-east-1.amazonaws.com/us-east-1_abc"
	env["TOOLRAG_OAUTH_SCOPE_PREFIX"] = "toolrag/"
	env["TOOLRAG_OAUTH_SCOPES"] = "toolrag/tools, toolrag/admin"
	env["TOOLRAG_OAUTH_GRANTS"] = `[{"match":{"scope":"toolrag/tools"},"servers":{"echo":{}}},{"match":{"scope":"toolrag/admin"},"admin":true,"servers":{"echo":{}}}]`
	c, err := FromEnv(getenv)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Grants) != 2 || !c.Grants[1].Admin || strings.Join(c.ScopesSupported, "|") != "toolrag/tools|toolrag/admin" {
		t.Errorf("parsed %+v", c)
	}
	env["TOOLRAG_OAUTH_GRANTS"] = `[{"match":{"scope":"x"},"server":{"echo":{}}}]`
	if _, err := FromEnv(getenv); err == nil || !strings.Contains(err.Error(), "TOOLRAG_OAUTH_GRANTS") {
		t.Errorf("misspelt grant field: %v", err)
	}
	env["TOOLRAG_OAUTH_GRANTS"] = `[{"match":{"scope":"x"},"servers":{"echo":{}}}]`
	env["TOOLRAG_OAUTH_CLOCK_SKEW"] = "soon"
	if _, err := FromEnv(getenv); err == nil || !strings.Contains(err.Error(), "TOOLRAG_OAUTH_CLOCK_SKEW") {
		t.Errorf("bad skew: %v", err)
	}
}

func TestCheckKeyIDs(t *testing.T) {
	if err := CheckKeyIDs([]policy.Key{{ID: "dev"}, {ID: "oauth:alice"}}); err == nil || !strings.Contains(err.Error(), "oauth:alice") {
		t.Errorf("error %v", err)
	}
}
