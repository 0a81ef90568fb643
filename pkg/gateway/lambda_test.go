package gateway_test

import (
	"bytes"
	"context"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/metrics"
)

// lambdaFront is the gateway as the gateway function serves it to API
// Gateway HTTP API events: lambdahttp's adapter and size check, then
// authentication, per-tool metrics (pkg/awsrt's WrapMCP) and the gateway
// on a runtime that keeps no stream to a client.
func lambdaFront(tb testing.TB) (func(context.Context, events.APIGatewayV2HTTPRequest) (events.APIGatewayV2HTTPResponse, error), *metrics.Registry) {
	tb.Helper()
	reg := metrics.New()
	h := newTestGatewayWith(tb, upstreamServer(), 5*time.Second, gateway.HTTPOptions{},
		func(inner http.Handler) http.Handler { return metrics.ObserveTools(reg, inner) },
		func(c *gateway.Config) { c.NoClientStreams = true })
	return lambdahttp.HTTPAPIHandler(h), reg
}

// lambdaEvent is a POST /mcp of body with header, as API Gateway sends it.
func lambdaEvent(header http.Header, body string) events.APIGatewayV2HTTPRequest {
	ev := events.APIGatewayV2HTTPRequest{Version: "2.0", RawPath: "/mcp", Body: body, Headers: map[string]string{}}
	ev.RequestContext.HTTP.Method = http.MethodPost
	ev.RequestContext.HTTP.Path = "/mcp"
	for k := range header {
		ev.Headers[strings.ToLower(k)] = header.Get(k)
	}
	return ev
}

// lambdaFindTools is a 2026-07-28 find_tools call, padded with pad bytes
// of JSON whitespace (which no decoder copies).
func lambdaFindTools(pad int) (http.Header, string) {
	tc := fastCase{tool: "find_tools", params: `,"arguments":{"query":"echo text"}`}
	return fastHeader("admin", mcp.LATEST_PROTOCOL_VERSION, "", "find_tools"), fastBody(tc, mcp.LATEST_PROTOCOL_VERSION) + strings.Repeat(" ", pad)
}

// TestLambdaToolsCallReadsBodyOnce: on the Lambda path the body of a
// tools/call is read once and shared by every layer that needs it (the
// size check, the gateway's decode; the per-tool metrics are named from
// that decode and read nothing). With a body of 1 MiB of padding, a call
// allocates about 2 MiB: the adapter's copy out of the event
// (aws-lambda-go-api-proxy) and the one read. Each layer reading the body
// for itself, as before, made it 9.6 MiB.
func TestLambdaToolsCallReadsBodyOnce(t *testing.T) {
	h, reg := lambdaFront(t)
	const pad = 1 << 20
	header, body := lambdaFindTools(pad)
	ev := lambdaEvent(header, body)
	ctx := context.Background()
	call := func() {
		t.Helper()
		resp, err := h(ctx, ev)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(resp.Body, "alpha__echo") {
			t.Fatalf("find_tools: %v, %d %.300s", err, resp.StatusCode, resp.Body)
		}
	}
	call() // warm: the first call fills caches
	const calls = 4
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for range calls {
		call()
	}
	runtime.ReadMemStats(&after)
	perCall := float64(after.TotalAlloc-before.TotalAlloc) / calls
	t.Logf("%.2f MiB allocated per call with a %d-byte body", perCall/(1<<20), len(body))
	if perCall > 3*float64(len(body)) {
		t.Errorf("a call allocated %.1f× its body (%.0f bytes): the body is copied more than once after the event adapter", perCall/float64(len(body)), perCall)
	}
	var out bytes.Buffer
	_ = reg.WritePrometheus(&out)
	if !strings.Contains(out.String(), `mcp_tool_requests_total{tool="find_tools"} 5`) {
		t.Errorf("per-tool metrics did not count the 5 calls from the gateway's decode:\n%s", out.String())
	}
}

// subscriptions/listen needs a stream an invocation cannot hold: the
// gateway refuses it with a JSON-RPC error carrying the request's id.
func TestLambdaRefusesListen(t *testing.T) {
	h, _ := lambdaFront(t)
	header := fastHeader("admin", mcp.LATEST_PROTOCOL_VERSION, "", "")
	header.Set(mcp.HeaderMethod, "subscriptions/listen")
	header.Del(mcp.HeaderName)
	resp, err := h(context.Background(), lambdaEvent(header, `{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{}}`))
	if err != nil || !strings.Contains(resp.Body, `"id":7`) || !strings.Contains(resp.Body, `"code":-32601`) ||
		!strings.Contains(resp.Body, "Lambda") {
		t.Fatalf("listen answer: %v %d %q", err, resp.StatusCode, resp.Body)
	}
}

// BenchmarkLambdaToolsCall: one find_tools call through the Lambda front
// (event adapter, size check, auth, per-tool metrics, gateway, a 6-tool
// catalog); -benchmem shows what the request pipeline allocates.
func BenchmarkLambdaToolsCall(b *testing.B) {
	h, _ := lambdaFront(b)
	header, body := lambdaFindTools(0)
	ev := lambdaEvent(header, body)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if resp, err := h(ctx, ev); err != nil || resp.StatusCode != http.StatusOK {
			b.Fatalf("find_tools: %v %d", err, resp.StatusCode)
		}
	}
}
