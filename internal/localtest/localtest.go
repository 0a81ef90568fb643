// Package localtest starts the local gateway (pkg/local) in-process for
// tests, the way net/http/httptest starts an HTTP server: on a temporary
// configuration directory written from the registry and keys documents,
// synced once, served by an httptest server on a loopback port, and closed
// when the test ends.
//
// It lives outside pkg/local because pkg/local's own in-package tests use
// internal/testenv, which therefore cannot import pkg/local; those tests
// build their runtimes themselves. Only tests import this package.
package localtest

import (
	"context"
	"log/slog"
	"net"
	"net/http/httptest"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

// Options configure a test gateway. Registry and Keys are required.
type Options struct {
	Registry string            // registry.yaml
	Keys     string            // keys.yaml
	Env      map[string]string // variables over testenv.LocalGatewayEnv's
	Logger   *slog.Logger      // default: discard
	Embedder embed.Embedder    // default: the one TOOL_RAG_EMBEDDER selects
	// Sync is the build mode of the first sync (default indexer.ModeFull).
	Sync indexer.Mode
	// Listener is the listener Start serves on (default a new loopback
	// port): a test binds it first when the configuration needs the
	// gateway's URL, such as an OAuth audience.
	Listener net.Listener
}

// Gateway is a started test gateway.
type Gateway struct {
	Runtime *local.Runtime
	Server  *httptest.Server // serving Runtime.Handler
	URL     string           // the MCP endpoint: Server.URL + "/mcp"
}

// New builds the local runtime of o and runs its first sync; it closes the
// runtime when t ends. It is for tests that serve the handler themselves.
func New(t testing.TB, o Options) *local.Runtime {
	t.Helper()
	vals := testenv.LocalGatewayEnv(t, o.Registry, o.Keys, o.Env)
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ctx := context.Background()
	g, err := local.New(ctx, local.Options{Getenv: func(k string) string { return vals[k] }, Logger: log, Embedder: o.Embedder})
	if err != nil {
		t.Fatalf("localtest: start the gateway: %v", err)
	}
	t.Cleanup(func() { g.Close() })
	mode := o.Sync
	if mode == "" {
		mode = indexer.ModeFull
	}
	if _, err := g.Sync(ctx, mode); err != nil {
		t.Fatalf("localtest: first sync: %v", err)
	}
	return g
}

// Start is New served by an httptest server, closed when t ends.
func Start(t testing.TB, o Options) *Gateway {
	t.Helper()
	g := New(t, o)
	srv := httptest.NewUnstartedServer(g.Handler)
	if o.Listener != nil {
		srv.Listener.Close()
		srv.Listener = o.Listener
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return &Gateway{Runtime: g, Server: srv, URL: srv.URL + "/mcp"}
}
