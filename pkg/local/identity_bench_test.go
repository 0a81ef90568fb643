package local

import (
	"fmt"
	"net/url"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// A tool call through the gateway to the same upstream, with a static
// header and with the caller's own (cached) user_secret grant:
//
//	go test ./pkg/local -run '^$' -bench BenchmarkUpstreamIdentityCall -benchtime 2000x -count 4
func BenchmarkUpstreamIdentityCall(b *testing.B) {
	up := testenv.NewWhoServer(b, map[string]string{"svc": "service", "pat-alice": "alice"})
	dir := b.TempDir()
	registry := fmt.Sprintf("servers:\n  st:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer svc\"}\n  pu:\n    transport: streamable_http\n    url: %q\n    headers: {Authorization: \"Bearer svc\"}\n    auth: {mode: user_secret}\n", up.URL+"/mcp", up.URL+"/mcp")
	keys := "keys:\n  - id: alice\n    secret: \"k-alice\"\n    servers: {st: {tool_prefixes: [\"*\"]}, pu: {tool_prefixes: [\"*\"]}}\n"
	e := startGatewayWith(b, registry, keys, map[string]string{"TOOL_RAG_VAULT_DB": filepath.Join(dir, "g.db"), "TOOL_RAG_VAULT_KEY_FILE": filepath.Join(dir, "k")})
	s := rawConnect(b, e.url, "k-alice", urlElicitation)
	link := testenv.ElicitationURL(s.CallTool("pu__whoami", nil))
	if code, _ := testenv.PostForm(b, link, url.Values{"key": {"k-alice"}, "secret": {"pat-alice"}}); code != 200 {
		b.Fatalf("connect: %d", code)
	}
	for _, c := range []struct{ name, tool, want string }{{"static", "st__whoami", "sub=service"}, {"user_secret", "pu__whoami", "sub=alice"}} {
		b.Run(c.name, func(b *testing.B) {
			if got, _ := testenv.RawResultText(s.CallTool(c.tool, nil)); got != c.want {
				b.Fatalf("%s: %q", c.tool, got)
			}
			for b.Loop() {
				s.CallTool(c.tool, nil)
			}
		})
	}
}
