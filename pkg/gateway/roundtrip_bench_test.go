package gateway_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// BenchmarkLongCallsInputRequired measures one multi round trip (the call
// answered input_required, then the retry with the answers) of a
// 2026-07-28 client over loopback HTTP: straight to the upstream
// ("direct"), and through the gateway ("gateway": two gateway instances
// sharing the state key, the retry sent to the other one). The difference
// is what the gateway's relay adds per round trip (auth, policy, sealing
// and opening the state, the upstream hop).
func BenchmarkLongCallsInputRequired(b *testing.B) {
	up := httptest.NewServer(server.NewStreamableHTTPServer(testenv.AskingServer()))
	b.Cleanup(up.Close)
	urls := roundTripGateways(b, testenv.AskingServer(), []byte("a key shared by every instance!!"), 0, 0)
	caps := `{"elicitation":{},"sampling":{}}`
	b.Run("direct", func(b *testing.B) {
		c := testenv.ModernCall{ID: 7, Tool: "confirm", Args: map[string]any{"item": "x"}, Caps: caps}
		h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"}}
		for k, v := range c.Headers() {
			h.Set(k, v)
		}
		for b.Loop() {
			if a := post(b, up.URL+"/mcp", h, c.Body()); !strings.Contains(a.body, `"input_required"`) {
				b.Fatalf("direct: %s", a.body)
			}
			retry := c
			retry.Responses, retry.State = testenv.AskingYes, "asked:x" // the upstream's own state
			if a := post(b, up.URL+"/mcp", h, retry.Body()); !strings.Contains(a.body, "deleted x") {
				b.Fatalf("direct retry: %s", a.body)
			}
		}
	})
	b.Run("gateway", func(b *testing.B) {
		c := modernCall{"agent", testenv.ModernCall{Tool: "alpha__confirm", Args: map[string]any{"item": "x"}, Caps: caps}}
		for b.Loop() {
			ask := c.send(b, urls[0])
			retry := c
			retry.Responses, retry.State = testenv.AskingYes, ask.RequestState
			if got := retry.send(b, urls[1]); got.Text() != "deleted x (user: accept; llm said fine)" {
				b.Fatalf("gateway retry: %+v", got)
			}
		}
	})
}
