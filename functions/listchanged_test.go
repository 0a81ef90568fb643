package functions_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/awsclient"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/syncinvoke"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/bridge"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// TestFidelityBridgeListChangedSync: on AWS the stdio bridge holds the
// upstream's connection; when the server adds a tool and announces it
// (notifications/tools/list_changed), the bridge invokes the sync function
// (through the AWS SDK, asynchronously, under aws-lambda-rie) for that
// server alone, and the tool lands in the tools table with no scheduled
// sync. The bridge reports no damping for a server that changed once.
func TestFidelityBridgeListChangedSync(t *testing.T) {
	rie, _ := emulated(t)
	ctx := context.Background()
	d := newDeployment(t)
	syncFn := startFunction(t, rie, "toolrag-sync", testenv.GoBinary(t, "./functions/sync"), 900, d.env)

	// The SDK's Invoke is POST /2015-03-31/functions/<name>/invocations:
	// the emulator's function is named "function".
	for k, v := range map[string]string{"AWS_REGION": "us-east-1", "AWS_ACCESS_KEY_ID": "local", "AWS_SECRET_ACCESS_KEY": "local"} {
		t.Setenv(k, v)
	}
	lc, err := awsclient.Lambda(ctx, strings.TrimSuffix(syncFn.url, "/2015-03-31/functions/function/invocations"))
	if err != nil {
		t.Fatal(err)
	}
	grow := filepath.Join(t.TempDir(), "grow")
	b := startBridge(t, d, bridge.Config{
		Command: testenv.GoBinary(t, "./servers/echo"), Args: []string{"-grow-file", grow}, Name: "grower",
		SyncTrigger: syncinvoke.Trigger(lc, "function", "grower"),
	})
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil || rep.Sync.Synced != 2 {
		t.Fatalf("first sync: %v %+v", err, rep)
	}
	tools := dynamo.NewToolStore(d.ddb, d.tables.Tools)
	if _, err := tools.GetTool(ctx, "grower__tide_forecast"); err == nil {
		t.Fatal("the tools table holds grower__tide_forecast before the server added it")
	}
	if _, err := tools.GetTool(ctx, "grower__echo"); err != nil {
		t.Fatalf("the first sync did not store the bridge's tools: %v", err)
	}

	if err := os.WriteFile(grow, []byte("tide_forecast\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		if _, err := tools.GetTool(ctx, "grower__tide_forecast"); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tool the server added did not reach the tools table within 60 s of its list_changed\nsync function:\n%s", syncFn.logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	if h := b.Health(ctx); h.ListChangesDamped != "" || h.Tools != 6 {
		t.Errorf("bridge health after one change: damped %q, %d tools", h.ListChangesDamped, h.Tools)
	}
}

// startBridge serves a stdio server through toolrag's bridge, as a
// Fargate task does, until the test ends, and registers it in d's registry
// under cfg.Name.
func startBridge(t *testing.T, d *deployment, cfg bridge.Config) *bridge.Bridge {
	t.Helper()
	ctx := context.Background()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	b, err := bridge.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	hop := httptest.NewServer(b.Handler())
	t.Cleanup(hop.Close)
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: hop.URL + "/mcp"})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewRegistryStore(d.ddb, d.tables.Registry).PutServer(ctx, cfg.Name, doc); err != nil {
		t.Fatal(err)
	}
	return b
}
