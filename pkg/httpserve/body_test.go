package httpserve_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/httpserve"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

// TestLargeUploads413: 10 MB uploads to /mcp and /tool-rag/retrieve of a
// real local gateway, many of them and several at once, each on a new
// connection, all get their 413 — none a connection reset (which about one
// in seven got while the gateway answered before reading the body).
func TestLargeUploads413(t *testing.T) {
	dir := t.TempDir()
	reg := fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", testenv.GoBinary(t, "./servers/echo"))
	write := func(name, s string) {
		if err := osWriteFile(dir+"/"+name, s); err != nil {
			t.Fatal(err)
		}
	}
	write("registry.yaml", reg)
	write("keys.yaml", "keys:\n  - id: k\n    secret: \"upload-key-1234\"\n    servers: {echo: {}}\n")
	env := map[string]string{"MCP_GATEWAY_CONFIG_DIR": dir, "TOOL_RAG_DB": dir + "/t.db", "TOOL_RAG_HEALTHCHECK_INTERVAL": "0",
		"MCP_GATEWAY_MAX_BODY_BYTES": "1048576"}
	ctx := context.Background()
	g, err := local.New(ctx, local.Options{Getenv: func(k string) string { return env[k] }, Logger: discardLogger()})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := g.Sync(ctx, indexer.ModeFull); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := httpserve.New(g.Handler)
	go srv.Serve(httpserve.IdleUntilFirstByte(ln, srv.IdleTimeout))
	defer srv.Close()
	base := "http://" + ln.Addr().String()

	body := bytes.Repeat([]byte("x"), 10<<20)
	const n, parallel = 40, 4
	var mu sync.Mutex
	var failures []string
	var wg sync.WaitGroup
	sem := make(chan struct{}, parallel)
	for i := range n {
		path := "/mcp"
		if i%2 == 1 {
			path = "/tool-rag/retrieve"
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			// A new connection per upload, like separate curl runs.
			c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 60 * time.Second}
			req, _ := http.NewRequest("POST", base+path, bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer upload-key-1234")
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := c.Do(req)
			if err != nil {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s: %v", path, err))
				mu.Unlock()
				return
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(b), "1048576") {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("%s: %d %s", path, resp.StatusCode, b))
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(failures) > 0 {
		t.Errorf("%d of %d uploads did not get their 413: %v", len(failures), n, failures)
	}
}
