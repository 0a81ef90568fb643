package bridge

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// echoBin is servers/echo, listBin testdata/listserver and rawBin
// testdata/rawserver, built once.
var echoBin, listBin, rawBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "bridge-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	echoBin = filepath.Join(dir, "echo")
	listBin = filepath.Join(dir, "listserver")
	rawBin = filepath.Join(dir, "rawserver")
	for bin, pkg := range map[string]string{
		echoBin: "github.com/toolrag/mcp-gateway/servers/echo",
		listBin: "github.com/toolrag/mcp-gateway/pkg/bridge/testdata/listserver",
		rawBin:  "github.com/toolrag/mcp-gateway/pkg/bridge/testdata/rawserver",
	} {
		if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "building %s: %v\n%s", pkg, err, out)
			os.RemoveAll(dir)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// testBridge is a Bridge served by an httptest server on 127.0.0.1.
type testBridge struct {
	*Bridge
	url  string // base URL
	logs *testenv.Buffer
}

// startBridge starts a Bridge with cfg and checks at cleanup that Close
// leaves no server process behind.
func startBridge(t testing.TB, cfg Config) *testBridge {
	t.Helper()
	logs := &testenv.Buffer{}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	b, err := New(ctx, cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	ts := httptest.NewServer(b.Handler())
	t.Cleanup(func() {
		ts.Close()
		if err := b.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if pids := b.PIDs(); len(pids) > 0 {
			t.Errorf("after Close, server processes %v are still alive", pids)
		}
		if t.Failed() {
			t.Logf("bridge log:\n%s", logs.String())
		}
	})
	return &testBridge{Bridge: b, url: ts.URL, logs: logs}
}

// connect returns an initialised MCP client of the bridge at base+"/mcp";
// legacy limits it to the initialize-handshake protocol versions.
func connect(t testing.TB, base string, legacy bool, topts ...transport.StreamableHTTPCOption) *client.Client {
	t.Helper()
	c, _ := testenv.Connect(t, base+"/mcp", testenv.MCPClient{Legacy: legacy, Name: "bridge-test", Transport: topts})
	return c
}

func ctxT(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
