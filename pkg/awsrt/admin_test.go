package awsrt

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// A key created by the CLI path works at the gateway at once, and its
// secret is stored nowhere.
func TestCreateKey(t *testing.T) {
	e := newTestEnv(t)
	secret, err := e.keys.CreateWithSecret(context.Background(), policy.Key{ID: "cli", Servers: map[string]policy.Rule{"echo": {ToolPrefixes: []string{"rev"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(secret, "trg_") || len(secret) < 40 || secret == policy.NewSecret() {
		t.Fatalf("secret %q", secret)
	}
	if _, err := e.keys.CreateWithSecret(context.Background(), policy.Key{ID: "cli", Servers: map[string]policy.Rule{"echo": {}}}); err == nil {
		t.Fatal("a second key with the same id was created")
	}
	out, err := e.ddb.Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(e.tables.Keys)})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(out.Items)
	if strings.Contains(string(raw), secret) {
		t.Fatal("the keys table contains the secret")
	}
	h := lambdahttp.Dispatch(e.gateway(t), lambdahttp.Options{})
	for _, tc := range []struct {
		secret string
		want   int
	}{{secret, 200}, {secret + "x", http.StatusUnauthorized}} {
		r := invoke(t, h, event(t, "http-api-health.json", request{auth: tc.secret, path: "/tool-rag/health"}))
		if r.status != tc.want {
			t.Errorf("status %d, want %d", r.status, tc.want)
		}
	}
}

func TestRegistryPush(t *testing.T) {
	dir := t.TempDir()
	hand := filepath.Join(dir, "registry.yaml")
	gen := filepath.Join(dir, "registry.generated.yaml")
	write := func(p, s string) {
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(hand, `servers:
  remote:
    transport: streamable_http
    url: https://127.0.0.1:9/mcp
    headers: {Authorization: "Bearer ${TOOLRAG_UPSTREAM_REMOTE_TOKEN}"}
    timeout: 45s
`)
	write(gen, `servers:
  fs:
    transport: stdio
    command: npx
    args: [server-filesystem]
  git:
    transport: stdio
    command: uvx
`)
	env := map[string]string{"TOOLRAG_UPSTREAM_REMOTE_TOKEN": "tok"}
	servers, err := config.LoadRegistry(hand, gen, config.KeepVars)
	if err != nil {
		t.Fatal(err)
	}
	if got := servers["remote"].Headers["Authorization"]; got != "Bearer ${TOOLRAG_UPSTREAM_REMOTE_TOKEN}" {
		t.Fatalf("header without --expand-env = %q; the placeholder must be kept", got)
	}
	_, err = config.RegistryDocs(servers, false)
	if err == nil || !strings.Contains(err.Error(), "fs, git") || !strings.Contains(err.Error(), "toolrag bridge") || !strings.Contains(err.Error(), "--allow-stdio") {
		t.Fatalf("stdio entries: %v", err)
	}
	docs, err := config.RegistryDocs(servers, true)
	if err != nil || len(docs) != 3 {
		t.Fatalf("--allow-stdio: %v %v", docs, err)
	}
	// What the functions read back: the placeholder expanded from their
	// environment, the timeout kept.
	cfg, err := config.DecodeServerConfig(context.Background(), docs["remote"], config.EnvSecrets(func(k string) string { return env[k] }))
	if err != nil || cfg.Headers["Authorization"] != "Bearer tok" || cfg.Timeout.String() != "45s" {
		t.Fatalf("decoded %+v %v", cfg, err)
	}

	expanded, err := config.LoadRegistry(hand, gen, func(k string) string { return env[k] })
	if err != nil || expanded["remote"].Headers["Authorization"] != "Bearer tok" {
		t.Fatalf("--expand-env: %+v %v", expanded["remote"], err)
	}
	if _, err := config.LoadRegistry(hand, gen, func(string) string { return "" }); err == nil {
		t.Fatal("--expand-env with the variable unset was accepted")
	}

	// Pushed to the table, the gateway picks the entries up.
	e := newTestEnv(t)
	delete(docs, "fs")
	delete(docs, "git")
	ch, err := e.registry.ReplaceAll(context.Background(), docs)
	if err != nil || !slices.Equal(ch.Added, []string{"remote"}) {
		t.Fatalf("push: %+v %v", ch, err)
	}
	t.Setenv("TOOLRAG_UPSTREAM_REMOTE_TOKEN", "tok")
	g := e.gateway(t, func(c *Config) { c.UpstreamListTimeout = 1 })
	if !slices.Equal(g.Upstreams.Servers(), []string{"remote"}) {
		t.Fatalf("gateway upstreams %v", g.Upstreams.Servers())
	}
}

// TestCheckGrants: `toolrag keys create` refuses a key granting a server
// the registry table does not have, naming the key and the id (before, the
// key was stored and silently granted nothing).
func TestCheckGrants(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", "http://127.0.0.1:1/mcp")
	ctx := context.Background()
	if err := e.registry.CheckGrants(ctx, policy.Key{ID: "ok", Servers: map[string]policy.Rule{"echo": {}}}); err != nil {
		t.Errorf("grant of a registered server: %v", err)
	}
	err := e.registry.CheckGrants(ctx, policy.Key{ID: "typo", Servers: map[string]policy.Rule{"echo": {}, "ehco": {}, "gh": {}}})
	if err == nil || !strings.Contains(err.Error(), `key "typo" grants server "ehco", server "gh", not in the registry table`) {
		t.Errorf("grant of unregistered servers: %v", err)
	}
}
