package metrics

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

func decodeEMF(t *testing.T, b *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var doc map[string]any
		if err := json.Unmarshal([]byte(line), &doc); err != nil {
			t.Fatalf("EMF line %q: %v", line, err)
		}
		aws := doc["_aws"].(map[string]any)
		cwm := aws["CloudWatchMetrics"].([]any)[0].(map[string]any)
		if cwm["Namespace"] != "ToolRAG" {
			t.Fatalf("namespace %v", cwm["Namespace"])
		}
		// Every declared metric has its value in the document.
		for _, m := range cwm["Metrics"].([]any) {
			name := m.(map[string]any)["Name"].(string)
			if _, ok := doc[name]; !ok {
				t.Fatalf("metric %q declared without a value", name)
			}
		}
		out = append(out, doc)
	}
	b.Reset()
	return out
}

func TestEMF(t *testing.T) {
	r := New()
	var calls int64
	r.CounterFunc("auth_failures_total", func() int64 { return calls })
	r.Counter("toolrag_http_requests_total", "route=retrieve", "code=200").Add(2)
	r.Gauge("tools_in_db", func() float64 { return 42 })
	h := r.Histogram("mcp_tool_duration_seconds", "tool=find_tools")
	for range 9 {
		h.Observe(3 * time.Millisecond)
	}
	h.Observe(3 * time.Second)
	e := &EMF{Namespace: "ToolRAG", Dimensions: map[string]string{"FunctionName": "gw"}}
	var b bytes.Buffer
	calls = 5
	if err := e.Write(&b, r, time.Unix(1700000000, 0)); err != nil {
		t.Fatal(err)
	}
	doc := decodeEMF(t, &b)[0]
	want := map[string]float64{
		"auth_failures_total": 5, "toolrag_http_requests_total{code=200,route=retrieve}": 2, "tools_in_db": 42,
		"mcp_tool_duration_seconds_count{tool=find_tools}": 10, "mcp_tool_duration_seconds_p50{tool=find_tools}": 0.005,
		"mcp_tool_duration_seconds_p99{tool=find_tools}": 5,
	}
	for k, v := range want {
		if doc[k] != v {
			t.Errorf("%s = %v, want %v", k, doc[k], v)
		}
	}
	if doc["FunctionName"] != "gw" || doc["_aws"].(map[string]any)["Timestamp"].(float64) != 1700000000000 {
		t.Errorf("dimensions or timestamp: %v", doc)
	}

	// The next line has the increase since the first, gauges as they are.
	calls = 7
	h.Observe(time.Millisecond)
	if err := e.Write(&b, r, time.Unix(1700000060, 0)); err != nil {
		t.Fatal(err)
	}
	doc = decodeEMF(t, &b)[0]
	if doc["auth_failures_total"] != 2.0 || doc["toolrag_http_requests_total{code=200,route=retrieve}"] != 0.0 || doc["tools_in_db"] != 42.0 ||
		doc["mcp_tool_duration_seconds_count{tool=find_tools}"] != 1.0 || doc["mcp_tool_duration_seconds_p99{tool=find_tools}"] != 0.001 {
		t.Errorf("second line: %v", doc)
	}

	// Over 100 series: several lines, each within CloudWatch's limit.
	for i := range 150 {
		r.Gauge(fmt.Sprintf("g%03d", i), func() float64 { return 1 })
	}
	if err := e.Write(&b, r, time.Unix(1700000120, 0)); err != nil {
		t.Fatal(err)
	}
	docs := decodeEMF(t, &b)
	if len(docs) != 2 {
		t.Fatalf("%d lines for 155 series, want 2", len(docs))
	}
}
