package upauth

import (
	"errors"
	"strings"
	"testing"
)

func TestValidate(t *testing.T) {
	empty := ""
	cases := []struct {
		name      string
		cfg       *Config
		transport string
		want      string // "" = valid
	}{
		{"nil is static", nil, "stdio", ""},
		{"static on stdio", &Config{Mode: "static"}, "stdio", ""},
		{"oauth with discovery", &Config{Mode: "oauth"}, "streamable_http", ""},
		{"oauth pre-registered", &Config{Mode: "oauth", ClientID: "gw", ClientSecret: "s", Scopes: []string{"repo", "read:org"}}, "sse", ""},
		{"oauth on stdio", &Config{Mode: "oauth"}, "stdio", "needs an sse or streamable_http server"},
		{"unknown mode", &Config{Mode: "magic"}, "streamable_http", `unknown mode "magic"`},
		{"passthrough mode", &Config{Mode: "passthrough"}, "streamable_http", "token passthrough"},
		{"forward flag", &Config{Mode: "oauth", ForwardInboundToken: true}, "streamable_http", "token passthrough"},
		{"forward flag on static", &Config{ForwardInboundToken: true}, "streamable_http", "token passthrough"},
		{"exchange without endpoint", &Config{Mode: "token_exchange", ClientID: "gw"}, "streamable_http", "needs token_endpoint"},
		{"exchange without client", &Config{Mode: "token_exchange", TokenEndpoint: "https://as.example/token"}, "streamable_http", "needs client_id"},
		{"exchange", &Config{Mode: "token_exchange", ClientID: "gw", TokenEndpoint: "https://as.example/token"}, "streamable_http", ""},
		{"bad token endpoint", &Config{Mode: "token_exchange", ClientID: "gw", TokenEndpoint: "as.example/token"}, "streamable_http", "absolute https"},
		{"secret without id", &Config{Mode: "oauth", ClientSecret: "s"}, "streamable_http", "needs client_id"},
		{"cimd and client id", &Config{Mode: "oauth", ClientID: "x", ClientMetadataDocument: true}, "streamable_http", "exclude each other"},
		{"user secret", &Config{Mode: "user_secret", Header: "X-Api-Key", Prefix: &empty}, "streamable_http", ""},
		{"user secret bad header", &Config{Mode: "user_secret", Header: "X Api"}, "streamable_http", "not a valid header"},
		{"bad scope", &Config{Mode: "oauth", Scopes: []string{"a b"}}, "streamable_http", "not a valid scope"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate(c.transport)
			if c.want == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error = %v, want it to contain %q", err, c.want)
			}
		})
	}
	if err := (&Config{Mode: "passthrough"}).Validate("sse"); !errors.Is(err, ErrPassthrough) {
		t.Errorf("passthrough error %v does not match ErrPassthrough", err)
	}
}

func TestSecretHeader(t *testing.T) {
	empty, tok := "", "token "
	for _, c := range []struct {
		cfg          *Config
		name, prefix string
	}{
		{&Config{Mode: ModeUserSecret}, "Authorization", "Bearer "},
		{&Config{Mode: ModeUserSecret, Prefix: &tok}, "Authorization", "token "},
		{&Config{Mode: ModeUserSecret, Header: "X-Api-Key"}, "X-Api-Key", ""},
		{&Config{Mode: ModeUserSecret, Header: "authorization", Prefix: &empty}, "authorization", ""},
	} {
		n, p := c.cfg.SecretHeader()
		if n != c.name || p != c.prefix {
			t.Errorf("%+v: got %q %q, want %q %q", c.cfg, n, p, c.name, c.prefix)
		}
	}
}
