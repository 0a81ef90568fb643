package local

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/provision"
)

// TestProvisionPickedUpWithoutRestart replays the add-server playbook
// against a running gateway: `provision` without --allow-setup leaves the
// stdio server whose setup has not run out of the registry (the gateway
// never tries it), and once `provision --allow-setup` has run its setup,
// the running gateway, which watches the registry files, serves its tools
// within seconds, without a restart.
func TestProvisionPickedUpWithoutRestart(t *testing.T) {
	root := t.TempDir()
	t.Chdir(root) // the generated registry's cwd is relative to the repository root
	cfg := filepath.Join(root, "config")
	for _, d := range []string{cfg, filepath.Join(root, "servers", "mem")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	registry := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", echoServer(t))
	for name, data := range map[string]string{
		"config/registry.yaml": registry,
		"config/keys.yaml":     "keys:\n  - id: admin\n    secret: \"k-admin\"\n    admin: true\n    servers: {echo: {}}\n",
		// The setup step installs the server (here: copies the echo binary).
		"servers/mem/manifest.yaml": fmt.Sprintf("id: mem\nkind: stdio\nsetup:\n  - \"cp %s ./server\"\ncommand: [\"./server\"]\n", echoServer(t)),
	} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	vals := map[string]string{
		"MCP_GATEWAY_CONFIG_DIR": cfg, "TOOL_RAG_DB": filepath.Join(root, "tools.db"),
		"TOOL_RAG_HEALTHCHECK_INTERVAL": "0", "MCP_GATEWAY_CONFIG_POLL": "1",
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g, err := New(ctx, Options{Getenv: func(k string) string { return vals[k] }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if _, err := g.Sync(ctx, indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	go g.WatchConfig(ctx)

	memTools := func() int {
		tools, err := g.Catalog.ListTools(ctx)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, tl := range tools {
			if strings.HasPrefix(tl.ID, "mem__") {
				n++
			}
		}
		return n
	}
	var out strings.Builder
	if err := provision.Run(ctx, provision.Options{Root: root, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "mem: left out of config/registry.generated.yaml until its setup has run") {
		t.Errorf("provision without --allow-setup: %s", out.String())
	}
	time.Sleep(3 * time.Second) // three polls: the gateway has seen the new file
	if slices.Contains(g.Upstreams.Servers(), "mem") || memTools() != 0 {
		t.Fatalf("the gateway took up mem before its setup ran: servers %v", g.Upstreams.Servers())
	}

	if err := provision.Run(ctx, provision.Options{Root: root, AllowSetup: true, Out: &out}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for memTools() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("30 s after provision --allow-setup the running gateway serves no mem__ tool (servers %v)", g.Upstreams.Servers())
		}
		time.Sleep(200 * time.Millisecond)
	}
}
