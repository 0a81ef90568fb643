package functions_test

import (
	"context"
	"encoding/json"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/aws/dynamo"
	"github.com/toolrag/mcp-gateway/pkg/awsrt"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// On the RIE path the functions' spans arrive too: the sync and gateway
// functions, run under aws-lambda-rie with OTEL_TRACES_EXPORTER=otlp and
// a batch delay of ten minutes (so only the flush at the end of each
// invocation can deliver them before the test reads Jaeger), export the
// sync run and, for a tools/call under the caller's traceparent, one
// trace: the invocation span continuing the caller, the cold start and
// the HTTP request under it, and the upstream call under the tool call.
// The upstream receives a traceparent of that trace.
func TestTracingLambdaRIE(t *testing.T) {
	rie, bins := emulated(t, "sync", "gateway")
	j := testenv.StartJaeger(t)
	d := newDeployment(t)
	// The one upstream, "echo", becomes one that reports the trace context
	// its calls arrive with.
	doc, err := config.EncodeServerConfig(upstream.ServerConfig{Transport: upstream.TransportStreamableHTTP, URL: func() string {
		u, _ := testenv.StartEchoAt(t, "127.0.0.1:0", "-trace-tool")
		return u
	}()})
	if err != nil {
		t.Fatal(err)
	}
	if err := dynamo.NewRegistryStore(d.ddb, d.tables.Registry).PutServer(context.Background(), "echo", doc); err != nil {
		t.Fatal(err)
	}
	service := testenv.UniqueName(t, "rie-")
	env := func(fn string) map[string]string {
		e := maps.Clone(d.env)
		e["OTEL_TRACES_EXPORTER"] = "otlp"
		e["OTEL_EXPORTER_OTLP_ENDPOINT"] = j.OTLP
		e["OTEL_SERVICE_NAME"] = service + "-" + fn
		e["OTEL_BSP_SCHEDULE_DELAY"] = "600000"
		return e
	}

	syncFn := startFunction(t, rie, "toolrag-sync", bins["sync"], 900, env("sync"))
	var rep awsrt.SyncReport
	if err := json.Unmarshal(syncFn.invoke(t, sample(t, "schedule-sync.json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Sync.Synced != 1 || rep.IndexErr != "" {
		t.Fatalf("sync report: %+v", rep)
	}
	syncSpans := j.Service(t, service+"-sync", 30*time.Second, func(spans []testenv.JaegerSpan) bool {
		_, ok := testenv.SpanNamed(spans, "index publish")
		return ok
	})
	for name, chain := range map[string][]string{
		"cold start":    {"toolrag-sync"},
		"sync server":   {"sync", "toolrag-sync"},
		"index publish": {"index build", "toolrag-sync"},
	} {
		s, ok := testenv.SpanNamed(syncSpans, name)
		if !ok {
			t.Errorf("sync function: no span %q in %v", name, spanNames(syncSpans))
			continue
		}
		checkAncestors(t, syncSpans, s, chain...)
	}

	// The gateway's first invocation (its cold start) is a tools/call
	// under the caller's trace.
	const traceID = "5b8efff798038103d269b633813fc60c"
	parent := "00-" + traceID + "-eee19b7ec3c1b174-01"
	gw := startFunction(t, rie, "toolrag-gateway", bins["gateway"], 29, env("gateway"))
	call := withBody(t, "http-api-run-tool.json", "",
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"echo__trace_context","arguments":{}}}}`)
	var ev map[string]any
	if err := json.Unmarshal(call, &ev); err != nil {
		t.Fatal(err)
	}
	ev["headers"].(map[string]any)["traceparent"] = parent
	call, _ = json.Marshal(ev)
	text, isErr := testenv.ResultText(t, rpcResult(t, decodeHTTP(t, gw.invoke(t, call)), 4))
	if isErr {
		t.Fatalf("run_tool echo__trace_context: %s", text)
	}
	var got struct {
		Header string `json:"traceparent_header"`
	}
	if err := json.Unmarshal([]byte(text), &got); err != nil {
		t.Fatalf("trace_context answered %q: %v", text, err)
	}
	if !strings.HasPrefix(got.Header, "00-"+traceID+"-") {
		t.Errorf("the upstream received traceparent %q, want one in trace %s", got.Header, traceID)
	}

	spans := j.Trace(t, traceID, 30*time.Second, func(spans []testenv.JaegerSpan) bool {
		_, ok := testenv.SpanNamed(spans, "tools/call trace_context")
		_, cold := testenv.SpanNamed(spans, "cold start")
		return ok && cold
	})
	t.Logf("trace %s: %v", traceID, spanNames(spans))
	inv, ok := testenv.SpanNamed(spans, "toolrag-gateway")
	if !ok {
		t.Fatalf("no invocation span in trace %s: %v", traceID, spanNames(spans))
	}
	if inv.ParentID != "eee19b7ec3c1b174" || inv.Tag("faas.coldstart") != "true" || inv.Tag("faas.trigger") != "http" {
		t.Errorf("invocation span: parent %s, tags %v", inv.ParentID, inv.Tags)
	}
	for name, chain := range map[string][]string{
		"cold start":               {"toolrag-gateway"},
		"POST /mcp":                {"toolrag-gateway"},
		"tools/call trace_context": {"execute_tool echo__trace_context", "tools/call run_tool", "POST /mcp", "toolrag-gateway"},
	} {
		s, ok := testenv.SpanNamed(spans, name)
		if !ok {
			t.Errorf("gateway function: no span %q in trace %s: %v", name, traceID, spanNames(spans))
			continue
		}
		checkAncestors(t, spans, s, chain...)
		if s.Service != service+"-gateway" {
			t.Errorf("span %q: service %q", name, s.Service)
		}
	}
	if up, ok := testenv.SpanNamed(spans, "tools/call trace_context"); ok && !strings.Contains(got.Header, up.SpanID) {
		t.Errorf("the upstream's traceparent %q does not name the upstream call span %s", got.Header, up.SpanID)
	}
	if cold, ok := testenv.SpanNamed(spans, "cold start"); ok && !cold.Start.Add(cold.Duration).Before(inv.Start.Add(time.Millisecond)) {
		t.Errorf("cold start %v+%v ends after the invocation began (%v)", cold.Start, cold.Duration, inv.Start)
	}
}

func spanNames(spans []testenv.JaegerSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// checkAncestors fails unless chain are among s's ancestors, in order,
// nearest first.
func checkAncestors(t *testing.T, spans []testenv.JaegerSpan, s testenv.JaegerSpan, chain ...string) {
	t.Helper()
	if !testenv.InChain(spans, s, chain...) {
		t.Errorf("span %q: ancestors %v, want in order %v", s.Name, testenv.Ancestors(spans, s), chain)
	}
}
