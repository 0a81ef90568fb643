package local

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// startGatewayWith runs a real local gateway with the registry and keys
// given (the keys are written as they are).
func startGatewayWith(t testing.TB, registry, keys string, vars map[string]string) *env {
	t.Helper()
	vals := testenv.LocalGatewayEnv(t, registry, keys, vars)
	ctx := context.Background()
	g, err := New(ctx, Options{Getenv: func(k string) string { return vals[k] }, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { g.Close() })
	if _, err := g.Sync(ctx, indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler)
	t.Cleanup(srv.Close)
	return &env{g: g, srv: srv, url: srv.URL + "/mcp"}
}

// rawConnect opens a raw 2025-11-25 session with the gateway at url whose
// client declares caps, so a test sees exactly the error object the
// gateway wrote.
func rawConnect(t testing.TB, url, key string, caps map[string]any) *testenv.RawSession {
	t.Helper()
	return testenv.OpenRawSession(t, testenv.PostTo(url), key, caps)
}

// restJSON calls the gateway's REST API with a key (none for "") and
// body, and decodes its JSON answer.
func restJSON(t testing.TB, method, u, key, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return resp.StatusCode, out
}
