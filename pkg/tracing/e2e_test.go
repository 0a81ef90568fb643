package tracing_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"

	"github.com/toolrag/mcp-gateway/internal/localtest"
	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/tracing"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// startJaeger starts the trace store of the tests.
var startJaeger = testenv.StartJaeger

// exportTo turns tracing on for one test, exporting to Jaeger j as
// service.
func exportTo(t *testing.T, j *testenv.Jaeger, service string) {
	t.Helper()
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", j.OTLP)
	t.Setenv("OTEL_SERVICE_NAME", service)
	shutdown, err := tracing.Setup(context.Background(), tracing.Config{})
	if err != nil {
		t.Fatal(err)
	}
	if !tracing.Enabled() {
		t.Fatal("tracing is off after Setup with OTEL_TRACES_EXPORTER=otlp")
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
}

// traceContext is what servers/echo's trace_context tool reports.
type traceContext struct {
	Header string         `json:"traceparent_header"`
	Meta   map[string]any `json:"meta"`
}

// A find_tools and a call to a Streamable HTTP upstream and to a stdio
// upstream, all under the client's traceparent, make one trace in Jaeger:
// each request's HTTP span, authentication, the MCP request, retrieval
// with its stages, the tool call with its policy decision and schema
// check, and the upstream call, in that parent/child order. Each upstream
// receives the trace context: in the traceparent header (HTTP) and in
// _meta (both), with the client's other _meta members.
func TestTracingGatewayToUpstreams(t *testing.T) {
	j := startJaeger(t)
	exportTo(t, j, "toolrag-e2e")

	echoBin := testenv.GoBinary(t, "./servers/echo")
	webURL, _ := testenv.StartEchoAt(t, "127.0.0.1:0", "-trace-tool")
	g := localtest.Start(t, localtest.Options{
		Registry: fmt.Sprintf("servers:\n  web:\n    transport: streamable_http\n    url: %s\n  pipe:\n    transport: stdio\n    command: %q\n    args: [\"-trace-tool\"]\n", webURL, echoBin),
		Keys:     "keys:\n  - id: agent\n    secret: k-agent\n    servers:\n      web: {}\n      pipe: {}\n",
		Embedder: embed.NewBuiltin(),
	})

	// The client's own trace: every request below is a child of its span.
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	parent := "00-" + traceID + "-00f067aa0ba902b7-01"
	// (One header map: WithHTTPHeaders replaces an earlier one.)
	c, _ := testenv.Connect(t, g.URL, testenv.MCPClient{
		Transport: []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(map[string]string{"traceparent": parent, "Authorization": "Bearer k-agent"})}})

	res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "report the trace context of this call"})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %s", err, testenv.Text(res))
	}
	for _, server := range []string{"web", "pipe"} {
		res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": server + "__trace_context", "arguments": map[string]any{}})
		if err != nil || res.IsError {
			t.Fatalf("run_tool %s__trace_context: %v %s", server, err, testenv.Text(res))
		}
		var got traceContext
		if err := json.Unmarshal([]byte(testenv.Text(res)), &got); err != nil {
			t.Fatalf("%s: trace_context answered %q: %v", server, testenv.Text(res), err)
		}
		metaTP, _ := got.Meta["traceparent"].(string)
		if !strings.HasPrefix(metaTP, "00-"+traceID+"-") || metaTP == parent {
			t.Errorf("%s: _meta.traceparent = %q, want the gateway's span in trace %s", server, metaTP, traceID)
		}
		if server == "web" && !strings.HasPrefix(got.Header, "00-"+traceID+"-") {
			t.Errorf("web: traceparent header = %q, want trace %s", got.Header, traceID)
		}
	}
	tracing.Flush(context.Background())

	want := []string{"find_tools", "retrieve", "retrieve candidates", "retrieve keyword", "retrieve dense", "retrieve fusion",
		"execute_tool web__trace_context", "execute_tool pipe__trace_context", "schema check", "authenticate"}
	spans := j.Trace(t, traceID, 30*time.Second, func(spans []testenv.JaegerSpan) bool {
		// Complete only when every span's parent has arrived too: the
		// server span of the last request ends after its response is
		// written, so it may reach Jaeger a batch later than the rest.
		ids := make(map[string]bool, len(spans))
		for _, s := range spans {
			ids[s.SpanID] = true
		}
		for _, s := range spans {
			if s.ParentID != "" && !ids[s.ParentID] && !strings.Contains(parent, s.ParentID) {
				return false
			}
		}
		n := 0
		for _, s := range spans {
			if s.Name == "tools/call trace_context" {
				n++
			}
		}
		for _, w := range want {
			if _, ok := testenv.SpanNamed(spans, "tools/call "+w); !ok {
				if _, ok := testenv.SpanNamed(spans, w); !ok {
					return false
				}
			}
		}
		return n >= 2
	})
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
		if s.TraceID != traceID {
			t.Errorf("span %q is in trace %s, want %s", s.Name, s.TraceID, traceID)
		}
		if s.Service != "toolrag-e2e" {
			t.Errorf("span %q has service %q", s.Name, s.Service)
		}
	}
	slices.Sort(names)
	t.Logf("trace %s: %d spans: %s", traceID, len(spans), strings.Join(names, ", "))

	// Parent/child order, nearest ancestor first.
	checkChain := func(s testenv.JaegerSpan, chain ...string) {
		t.Helper()
		if !testenv.InChain(spans, s, chain...) {
			t.Errorf("span %q: ancestors %v, want in order %v", s.Name, testenv.Ancestors(spans, s), chain)
		}
	}
	for _, s := range spans {
		switch {
		case s.Name == "retrieve":
			checkChain(s, "tools/call find_tools", "POST /mcp")
		case strings.HasPrefix(s.Name, "retrieve "):
			checkChain(s, "retrieve", "tools/call find_tools", "POST /mcp")
		case s.Name == "tools/call trace_context":
			server := s.Tag("toolrag.upstream.server")
			checkChain(s, "execute_tool "+server+"__trace_context", "tools/call run_tool", "POST /mcp")
			if s.Tag("span.kind") != "client" {
				t.Errorf("upstream span of %s: span.kind %q, want client", server, s.Tag("span.kind"))
			}
			if s.Tag("toolrag.outcome") != "ok" {
				t.Errorf("upstream span of %s: outcome %q", server, s.Tag("toolrag.outcome"))
			}
		case s.Name == "schema check":
			checkChain(s, "execute_tool", "tools/call run_tool")
		case strings.HasPrefix(s.Name, "execute_tool "):
			if s.Tag("toolrag.policy.decision") != "allow" || s.Tag("gen_ai.tool.name") == "" {
				t.Errorf("%s: policy decision %q, tool %q", s.Name, s.Tag("toolrag.policy.decision"), s.Tag("gen_ai.tool.name"))
			}
		case s.Name == "authenticate":
			checkChain(s, "POST /mcp")
			if s.Tag("toolrag.principal") != "agent" {
				t.Errorf("authenticate: principal %q, want agent", s.Tag("toolrag.principal"))
			}
		}
	}
	if r, ok := testenv.SpanNamed(spans, "retrieve"); !ok || r.Tag("toolrag.retrieve.top_match") == "" || r.Tag("toolrag.retrieve.results") == "0" {
		t.Errorf("retrieve span: %+v", r.Tags)
	}
}
