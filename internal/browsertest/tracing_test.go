package browsertest

import (
	"context"
	"regexp"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

// TestTracingConsoleTraceLink: with tracing on and TOOL_RAG_TRACE_URL set,
// a call row of Usage → Recent tool calls shows its trace id as a link to
// the configured trace viewer (Jaeger here, which holds that trace); with
// tracing off the Trace column is not shown.
func TestTracingConsoleTraceLink(t *testing.T) {
	// usageCalls signs in to a fresh gateway after one tool call and reads
	// the Trace header's visibility and the first call row's trace cell.
	type traceCell struct {
		HeaderShown bool   `json:"header"`
		Cells       int    `json:"cells"`
		Href        string `json:"href"`
		ID          string `json:"id"`
		Text        string `json:"text"`
	}
	usageCalls := func(t *testing.T) traceCell {
		e := startGatewayKeys(t, "", "keys:\n  - {id: admin, secret: k-admin, admin: true, servers: {echo: {}}}\n  - {id: agent, secret: k-agent, servers: {echo: {}}}\n", nil)
		c, _ := testenv.Connect(t, e.URL, testenv.MCPClient{Key: "k-agent", Name: "browser"})
		if _, err := testenv.CallTool(c, 30*time.Second, "run_tool",
			map[string]any{"call_name": "echo__echo", "arguments": map[string]any{"text": "hi"}}); err != nil {
			t.Fatal(err)
		}
		ctx, _ := browser(t)
		run(t, ctx, "open the console", chromedp.Navigate(e.Server.URL+"/console/"), chromedp.WaitVisible(chromedp.ID("signin-form")))
		signIn(t, ctx, "k-admin")
		run(t, ctx, "usage", chromedp.Navigate(e.Server.URL+"/console/#usage"),
			chromedp.WaitVisible(chromedp.CSS(`#usage-calls tr[data-call="echo__echo"]`)))
		return eval[traceCell](t, ctx, `(() => {
			const th = document.querySelector("#usage-calls thead tr").cells[5];
			const a = document.querySelector('#usage-calls tr[data-call="echo__echo"] a.trace');
			return {header: !!th && !th.hidden, cells: document.querySelector('#usage-calls tr[data-call="echo__echo"]').cells.length,
				href: a ? a.href : "", id: a ? a.dataset.trace : "", text: a ? a.textContent : ""};
		})()`)
	}

	t.Run("off", func(t *testing.T) {
		if tracing.Enabled() {
			t.Fatal("tracing is on before the test turned it on")
		}
		got := usageCalls(t)
		if got.HeaderShown || got.Cells != 5 || got.Href != "" {
			t.Errorf("tracing off: Trace header shown %v, %d cells in the call row, link %q; want no Trace column", got.HeaderShown, got.Cells, got.Href)
		}
	})

	t.Run("on", func(t *testing.T) {
		j := testenv.StartJaeger(t)
		t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
		t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLP)
		t.Setenv("OTEL_SERVICE_NAME", testenv.UniqueName(t, "console-"))
		t.Setenv("TOOL_RAG_TRACE_URL", j.Query+"/trace/{trace_id}")
		shutdown, err := tracing.Setup(context.Background(), tracing.Config{})
		if err != nil || !tracing.Enabled() {
			t.Fatalf("tracing did not turn on: %v", err)
		}
		t.Cleanup(func() { _ = shutdown(context.Background()) })
		got := usageCalls(t)
		if !got.HeaderShown || got.Cells != 6 {
			t.Errorf("tracing on: Trace header shown %v, %d cells in the call row; want the Trace column", got.HeaderShown, got.Cells)
		}
		if !regexp.MustCompile(`^[0-9a-f]{32}$`).MatchString(got.ID) || got.Href != j.Query+"/trace/"+got.ID || got.Text != got.ID[:min(8, len(got.ID))]+"…" {
			t.Fatalf("trace cell: id %q, link %q, text %q; want a link to %s/trace/<trace id>", got.ID, got.Href, got.Text, j.Query)
		}
		// The link leads to the call's trace.
		tracing.Flush(context.Background())
		spans := j.Trace(t, got.ID, 30*time.Second, func(spans []testenv.JaegerSpan) bool {
			_, ok := testenv.SpanNamed(spans, "execute_tool echo__echo")
			return ok
		})
		if _, ok := testenv.SpanNamed(spans, "execute_tool echo__echo"); !ok {
			t.Errorf("trace %s of the linked call: %d spans, none execute_tool echo__echo", got.ID, len(spans))
		}
	})
}
