package awsrt

import (
	"net/http"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/session"
)

// TestSessionBoundToKeyAcrossInstances (issue #11, finding 2): a session
// in the DynamoDB sessions table answers only the key that opened it, on
// every instance. Another key's POST and DELETE with its id get the 404 of
// an unknown session, and the owner's session survives them.
func TestSessionBoundToKeyAcrossInstances(t *testing.T) {
	e := newTestEnv(t)
	a := Dispatch(e.gateway(t), LambdaOptions{})
	b := Dispatch(e.gateway(t), LambdaOptions{})
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
