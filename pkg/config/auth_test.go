package config

import (
	"strings"
	"testing"
)

func TestRegistryAuth(t *testing.T) {
	env := map[string]string{"TOOLRAG_UPSTREAM_GH_SECRET": "s3cret"}
	getenv := func(k string) string { return env[k] }
	ok := `servers:
  gh:
    transport: streamable_http
    url: https://mcp.example/mcp
    auth:
      mode: oauth
      client_id: gateway
      client_secret: ${TOOLRAG_UPSTREAM_GH_SECRET}
      scopes: [repo]
  plain:
    transport: streamable_http
    url: https://plain.example/mcp
`
	got, err := ParseRegistry("registry.yaml", []byte(ok), getenv)
	if err != nil {
		t.Fatal(err)
	}
	if a := got["gh"].Auth; a == nil || a.Mode != "oauth" || a.ClientSecret != "s3cret" || a.Scopes[0] != "repo" {
		t.Errorf("gh auth = %+v", a)
	}
	if got["plain"].Auth != nil {
		t.Errorf("a server without auth got %+v", got["plain"].Auth)
	}
	for _, c := range []struct{ doc, want string }{
		{"servers:\n  x:\n    transport: streamable_http\n    url: https://x.example/mcp\n    auth: {mode: oauth, forward_inbound_token: true}\n", "token passthrough"},
		{"servers:\n  x:\n    transport: streamable_http\n    url: https://x.example/mcp\n    auth: {mode: passthrough}\n", "forbidden by the MCP authorization specification"},
		{"servers:\n  x:\n    transport: stdio\n    command: x\n    auth: {mode: user_secret}\n", "needs an sse or streamable_http server"},
		{"servers:\n  x:\n    transport: streamable_http\n    url: https://x.example/mcp\n    auth: {mode: oauth, client_id: a, client_secret: \"${TOOLRAG_UPSTREAM_NOPE}\"}\n", "needs environment variable TOOLRAG_UPSTREAM_NOPE"},
	} {
		_, err := ParseRegistry("registry.yaml", []byte(c.doc), getenv)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `registry.yaml:2: server "x"`) {
			t.Errorf("%s: error = %v, want %q with the file and line", c.doc, err, c.want)
		}
	}
}
