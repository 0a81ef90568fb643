package bridge

import (
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

const hopToken = "hop-secret-0123456789abcdef"

// With a hop credential the bridge refuses every request that does not
// carry it (no header, another scheme, a wrong or longer token) with 401
// and a WWW-Authenticate challenge, /health included, and never echoes
// what was sent; the gateway's way in (pkg/upstream with the registry
// entry's Authorization header) and the container health check
// (Probe with the credential) work.
func TestHopCredential(t *testing.T) {
	tb := startBridge(t, Config{Command: echoBin, Token: hopToken})
	initBody := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, tc := range []struct{ name, method, path, auth string }{
		{"no header", http.MethodPost, "/mcp", ""},
		{"wrong token", http.MethodPost, "/mcp", "Bearer wrong-secret-0123456789abcdef"},
		{"token with a suffix", http.MethodPost, "/mcp", "Bearer " + hopToken + "x"},
		{"basic scheme", http.MethodPost, "/mcp", "Basic " + hopToken},
		{"empty bearer", http.MethodPost, "/mcp", "Bearer "},
		{"health without it", http.MethodGet, "/health", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(initBody)
			}
			req, _ := http.NewRequest(tc.method, tb.url+tc.path, body)
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("status %d WWW-Authenticate %q body %s; want 401 with a Bearer challenge", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), out)
			}
			if strings.Contains(string(out), "secret-0123") || strings.Contains(string(out), "serverInfo") {
				t.Fatalf("the 401 body echoes the credential or serves MCP: %s", out)
			}
		})
	}

	// The gateway's way in: the registry entry's header.
	m := upstream.NewManager(upstream.Options{Logger: slog.New(slog.DiscardHandler)})
	defer m.Close()
	m.SetServers(map[string]upstream.ServerConfig{
		"fargate": {Transport: upstream.TransportStreamableHTTP, URL: tb.url + "/mcp", Headers: map[string]string{"Authorization": "Bearer " + hopToken}},
		"nocred":  {Transport: upstream.TransportStreamableHTTP, URL: tb.url + "/mcp"},
	})
	ctx := ctxT(t, 30*time.Second)
	res, err := m.CallTool(ctx, "fargate", "reverse", map[string]any{"text": "abc"})
	if err != nil || testenv.Text(res) != "cba" {
		t.Fatalf("call with the hop credential: %v %v", res, err)
	}
	if _, err := m.ListTools(ctx, "nocred"); err == nil {
		t.Fatal("a client without the hop credential listed the tools")
	}

	// The container health check.
	if summary, err := Probe(ctx, tb.url, "/mcp", hopToken); err != nil || !strings.Contains(summary, "5 tools over MCP") {
		t.Fatalf("Probe with the credential: %q %v", summary, err)
	}
	if _, err := Probe(ctx, tb.url, "/mcp", ""); err == nil || !strings.Contains(err.Error(), "401") {
		t.Fatalf("Probe without the credential: %v; want a 401 failure", err)
	}
}

// A hop credential too short to be a secret is refused at start, and the
// child never receives it in its environment.
func TestHopCredentialConfig(t *testing.T) {
	if _, err := New(ctxT(t, 10*time.Second), Config{Command: echoBin, Token: "short"}); err == nil || !strings.Contains(err.Error(), "at least 16") {
		t.Fatalf("short token: %v", err)
	}
	if got := withoutVar([]string{"PATH", TokenEnv, "HOME"}, TokenEnv); strings.Join(got, ",") != "PATH,HOME" {
		t.Fatalf("inherited env %v still names %s", got, TokenEnv)
	}
}
