package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
)

// countingWriter counts the bytes logged.
type countingWriter struct{ n atomic.Int64 }

func (c *countingWriter) Write(p []byte) (int, error) { c.n.Add(int64(len(p))); return len(p), nil }

// BenchmarkBadTokens is a flood of requests with bad bearer tokens on a
// warm gateway: every request a different token from a different client
// IP (the costly case: nothing cached, no per-IP failure throttle). It
// reports the handler's time per rejected request (DynamoDB Local on
// loopback; the Lambda runtime's own overhead not included), the DynamoDB
// requests and the log bytes per rejected request, the inputs of the
// per-million cost in docs/deploy.md (Costs).
//
//	go test -run '^$' -bench BadTokens -benchtime 2000x ./pkg/awsrt/
func BenchmarkBadTokens(b *testing.B) {
	e := newTestEnv(b)
	e.register(b, "echo", startEcho(b))
	e.sync(b, "")
	dg := newGate(b, testenv.DynamoDB(b), false)
	var keyCalls atomic.Int64
	dg.fail.Store(&failure{match: func(r *http.Request) bool {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(`"`+e.tables.Keys+`"`)) {
			keyCalls.Add(1)
		}
		return false
	}})
	client, err := dynamo.NewClient(context.Background(), dg.URL, nil)
	if err != nil {
		b.Fatal(err)
	}
	logs := &countingWriter{}
	g := e.gateway(b, func(c *Config) {
		c.DynamoDB = client
		c.Logger = slog.New(slog.NewJSONHandler(logs, nil))
		c.metricsOut = logs
	})
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})
	initialize(b, h, "http-api-initialize.json", devSecret) // warm
	events := make([]json.RawMessage, b.N)
	for i := range events {
		var ev map[string]any
		if err := json.Unmarshal(event(b, "http-api-tools-list.json", request{auth: fmt.Sprintf("bad-token-%08d-0123456789abcdef", i)}), &ev); err != nil {
			b.Fatal(err)
		}
		ev["requestContext"].(map[string]any)["http"].(map[string]any)["sourceIp"] = fmt.Sprintf("198.51.%d.%d", i/250%250, i%250+1)
		events[i], _ = json.Marshal(ev)
	}
	keyCalls.Store(0)
	logs.n.Store(0)
	var worst time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		r := invoke(b, h, events[i])
		worst = max(worst, time.Since(start))
		if r.status != http.StatusUnauthorized {
			b.Fatalf("bad token %d: status %d %s, want 401", i, r.status, r.body)
		}
	}
	b.StopTimer()
	b.ReportMetric(float64(keyCalls.Load())/float64(b.N), "keys-table-requests/op")
	b.ReportMetric(float64(logs.n.Load())/float64(b.N), "log-bytes/op")
	b.ReportMetric(float64(worst.Microseconds())/1000, "max-ms")
}
