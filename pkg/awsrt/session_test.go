package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/aws/lambdahttp"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// TestSessionBoundToKeyAcrossInstances (issue #11, finding 2): a session
// in the DynamoDB sessions table answers only the key that opened it, on
// every instance. Another key's POST and DELETE with its id get the 404 of
// an unknown session, and the owner's session survives them.
func TestSessionBoundToKeyAcrossInstances(t *testing.T) {
	e := newTestEnv(t)
	a := lambdahttp.Dispatch(e.gateway(t), lambdahttp.Options{})
	b := lambdahttp.Dispatch(e.gateway(t), lambdahttp.Options{})
	sid := initialize(t, a, "http-api-initialize.json", devSecret)
	unknown := session.NewID()

	for name, h := range map[string]func() response{
		"POST tools/list": func() response {
			return invoke(t, b, event(t, "http-api-tools-list.json", request{auth: agentSecret, session: sid}))
		},
		"DELETE": func() response {
			return invoke(t, b, event(t, "http-api-tools-list.json", request{auth: agentSecret, session: sid, method: http.MethodDelete}))
		},
	} {
		r := h()
		if r.status != http.StatusNotFound {
			t.Errorf("%s with another key's session: %d %q, want 404", name, r.status, r.body)
		}
	}
	ru := invoke(t, b, event(t, "http-api-tools-list.json", request{auth: agentSecret, session: unknown}))
	rf := invoke(t, b, event(t, "http-api-tools-list.json", request{auth: agentSecret, session: sid}))
	if ru.status != rf.status || ru.body != rf.body {
		t.Errorf("another key's session: %d %q; unknown session: %d %q; want the same answer", rf.status, rf.body, ru.status, ru.body)
	}
	if r := invoke(t, b, event(t, "http-api-tools-list.json", request{auth: devSecret, session: sid})); r.status != http.StatusOK {
		t.Fatalf("the owner on instance B after the attacks: %d %q", r.status, r.body)
	}
}

// TestAuthFailureLimitBySourceIP (issue #11, finding 5): on Lambda, failed
// authentications are counted per source IP of the request context; an
// X-Forwarded-For header (which the client writes) does not change it.
func TestAuthFailureLimitBySourceIP(t *testing.T) {
	e := newTestEnv(t)
	h := lambdahttp.Dispatch(e.gateway(t, func(c *Config) { c.Env.AuthFailureBurst, c.Env.AuthFailureRate = 2, 0.01 }), lambdahttp.Options{})
	from := func(ip, xff, secret string) response {
		var ev map[string]any
		if err := json.Unmarshal(event(t, "http-api-health.json", request{auth: secret, path: "/tool-rag/health"}), &ev); err != nil {
			t.Fatal(err)
		}
		ev["requestContext"].(map[string]any)["http"].(map[string]any)["sourceIp"] = ip
		if xff != "" {
			ev["headers"].(map[string]any)["x-forwarded-for"] = xff
		}
		raw, _ := json.Marshal(ev)
		return invoke(t, h, raw)
	}
	for i := 0; i < 2; i++ { // distinct guesses: a repeated bad key counts once against its address
		if r := from("198.51.100.7", "", fmt.Sprintf("wrong-%d", i)); r.status != http.StatusUnauthorized {
			t.Fatalf("failure %d within the burst: %d", i, r.status)
		}
	}
	if r := from("198.51.100.7", "192.0.2.99", agentSecret); r.status != http.StatusTooManyRequests || r.header("Retry-After") == "" {
		t.Errorf("a valid key from the throttled source IP (spoofed X-Forwarded-For): %d %q", r.status, r.body)
	}
	if r := from("198.51.100.8", "198.51.100.7", agentSecret); r.status != http.StatusOK {
		t.Errorf("another source IP: %d %q", r.status, r.body)
	}
}

// TestRedTeam2WithoutAuthRefusedOnLambda (issue "Security, second round",
// finding 8): a Lambda is never on loopback only, so the gateway function
// refuses to start without authentication instead of warning.
func TestRedTeam2WithoutAuthRefusedOnLambda(t *testing.T) {
	var cfg Config
	cfg.Env.WithoutAuth = true
	g, err := NewGatewayFunction(context.Background(), cfg)
	if !errors.Is(err, ErrWithoutAuthOnLambda) || g != nil {
		t.Fatalf("NewGatewayFunction with TOOL_RAG_WITHOUT_AUTH: %v, %v; want ErrWithoutAuthOnLambda", g, err)
	}
	if !strings.Contains(err.Error(), "keys create") {
		t.Errorf("the refusal does not say what to do: %v", err)
	}
}
