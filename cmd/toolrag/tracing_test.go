package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// From outside: the built `toolrag serve` with OTEL_TRACES_EXPORTER=otlp
// sends an HTTP upstream the trace context of a call (traceparent header
// and _meta, one trace) and exports its spans over OTLP.
func TestTracingServeBinaryPropagates(t *testing.T) {
	bin := testenv.GoBinary(t, "./cmd/toolrag")
	web, _ := testenv.StartEchoAt(t, "127.0.0.1:0", "-trace-tool")
	var exported atomic.Int64
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := io.Copy(io.Discard, r.Body)
		if r.URL.Path == "/v1/traces" {
			exported.Add(n)
		}
	}))
	t.Cleanup(collector.Close)
	gw := startServe(t, bin, map[string]string{
		"registry.yaml": fmt.Sprintf("servers:\n  web:\n    transport: streamable_http\n    url: %s\n", web),
		"keys.yaml":     "keys:\n  - id: agent\n    secret: k-agent\n    servers:\n      web: {}\n",
	}, "OTEL_TRACES_EXPORTER=otlp", "OTEL_EXPORTER_OTLP_ENDPOINT="+collector.URL)
	port := gw.port

	// tools/call run_tool web__trace_context, retried until the catalog
	// has the tool (the first sync runs at start).
	body := ""
	var text string
	deadline := time.Now().Add(90 * time.Second)
	for {
		text = callOnce(t, port, body)
		if strings.Contains(text, "traceparent_header") || time.Now().After(deadline) {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	var got struct {
		Header string         `json:"traceparent_header"`
		Meta   map[string]any `json:"meta"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("run_tool web__trace_context answered %q", text)
	}
	parts := strings.Split(got.Header, "-")
	metaTP, _ := got.Meta["traceparent"].(string)
	if len(parts) != 4 || len(parts[1]) != 32 || !strings.HasPrefix(metaTP, "00-"+parts[1]+"-") {
		t.Fatalf("upstream got traceparent header %q and _meta traceparent %q: want one trace", got.Header, metaTP)
	}

	// SIGTERM: the gateway stops and flushes its spans.
	_ = gw.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-gw.exited:
	case <-time.After(30 * time.Second):
		t.Fatal("toolrag serve did not stop within 30 s of SIGTERM")
	}
	if exported.Load() == 0 {
		t.Fatal("no span reached the OTLP collector")
	}
}

// callOnce calls run_tool web__trace_context through a new MCP session
// with the key and returns the result's text ("" on any failure).
func callOnce(t *testing.T, port int, _ string) string {
	c, _, err := testenv.Dial(fmt.Sprintf("http://127.0.0.1:%d/mcp", port), testenv.MCPClient{Key: "k-agent"})
	if err != nil {
		return ""
	}
	defer c.Close()
	res, err := testenv.CallTool(c, 20*time.Second, "run_tool", map[string]any{"call_name": "web__trace_context", "arguments": map[string]any{}})
	if err != nil || res.IsError {
		return ""
	}
	return testenv.Text(res)
}
