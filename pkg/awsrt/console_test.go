package awsrt

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
)

// TestConsoleOnLambda serves the operator console through the Lambda
// handler (HTTP API events) against DynamoDB Local and the S3 fake: the
// app with its CSP, the admin endpoints for an admin key only, and the
// registry's servers with the health function's verdict.
func TestConsoleOnLambda(t *testing.T) {
	e := newTestEnv(t)
	e.register(t, "echo", startEcho(t))
	e.register(t, "dead", deadURL(t))
	e.sync(t, string(event(t, "schedule-sync.json", request{})))
	p, err := NewProber(t.Context(), e.config(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Handle(t.Context(), json.RawMessage(event(t, "schedule-health.json", request{}))); err != nil {
		t.Fatal(err)
	}
	g := e.gateway(t)
	h := lambdahttp.Dispatch(g, lambdahttp.Options{})

	r := invoke(t, h, event(t, "http-api-health.json", request{path: "/console/"}))
	if r.status != 200 || !strings.Contains(r.body, `<script src="app.js" defer></script>`) ||
		!strings.Contains(r.header("Content-Security-Policy"), "script-src 'self'") || r.header("X-Frame-Options") != "DENY" {
		t.Fatalf("GET /console/: %d %v %.200s", r.status, r.headers, r.body)
	}
	r = invoke(t, h, event(t, "http-api-health.json", request{path: "/console/app.js"}))
	if r.status != 200 || !strings.Contains(r.body, "use strict") {
		t.Fatalf("GET /console/app.js: %d %.200s", r.status, r.body)
	}

	for _, tc := range []struct {
		secret string
		status int
	}{{"", 401}, {devSecret, 403}, {"k-admin", 200}} {
		r := invoke(t, h, event(t, "http-api-health.json", request{path: "/tool-rag/admin/servers", auth: tc.secret}))
		if r.status != tc.status {
			t.Errorf("admin servers with %q: %d %s, want %d", tc.secret, r.status, r.body, tc.status)
			continue
		}
		if tc.status != 200 {
			if strings.Contains(r.body, "echo") {
				t.Errorf("non-admin answer names a server: %s", r.body)
			}
			continue
		}
		var out struct {
			Servers []struct {
				ID, Status, Transport string
				Tools                 int
			}
		}
		if err := json.Unmarshal([]byte(r.body), &out); err != nil {
			t.Fatal(err)
		}
		got := map[string]string{}
		for _, s := range out.Servers {
			got[s.ID] = s.Status
			if s.ID == "echo" && (s.Tools < 5 || s.Transport != "streamable_http") {
				t.Errorf("echo: %+v", s)
			}
		}
		if got["echo"] != "up" || got["dead"] != "down" {
			t.Errorf("server statuses %v; want echo up and dead down (from the health function)", got)
		}
	}
	r = invoke(t, h, event(t, "http-api-health.json", request{path: "/tool-rag/admin/tools", auth: "k-admin"}))
	if r.status != 200 || !strings.Contains(r.body, `"echo__echo"`) {
		t.Errorf("admin tools: %d %.300s", r.status, r.body)
	}
}
