package session_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/session"
	"github.com/toolrag/mcp-gateway/pkg/session/sessiontest"
)

func TestMemoryConformance(t *testing.T) {
	sessiontest.Run(t, func(t *testing.T, now func() time.Time) session.Store {
		m := session.NewMemory()
		m.Now = now
		return m
	})
}

func TestMemorySweep(t *testing.T) {
	c := &sessiontest.Clock{}
	m := session.NewMemory()
	m.Now = c.Now
	ctx := context.Background()
	for _, id := range []string{"a", "b", "c"} {
		if err := m.Create(ctx, id, "key:a", time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	c.Advance(30 * time.Second)
	if err := m.AddTools(ctx, "a", nil); err != nil {
		t.Fatal(err)
	}
	c.Advance(45 * time.Second)
	if n := m.Sweep(); n != 2 || m.Len() != 1 {
		t.Fatalf("Sweep dropped %d, %d left; want 2 dropped, 1 left", n, m.Len())
	}
}

type failingStore struct{ session.Store }

func (failingStore) Create(context.Context, string, string, time.Duration) error {
	return errors.New("table is gone")
}
func (failingStore) Owner(context.Context, string) (string, bool, error) {
	return "", false, errors.New("table is gone")
}

func TestIDManager(t *testing.T) {
	ids := session.NewIDManager(session.NewMemory(), time.Hour)
	m := ids.For("key:alice")
	id := m.Generate()
	if !session.ValidID(id) || !strings.HasPrefix(id, "mcp-session-") {
		t.Fatalf("Generate() = %q", id)
	}
	if other := m.Generate(); other == id {
		t.Fatal("Generate returned the same id twice")
	}
	if term, err := m.Validate(id); err != nil || term {
		t.Fatalf("Validate(new) = %v, %v", term, err)
	}
	bad := []string{"", "mcp-session-", "mcp-session-xyz", "other-" + strings.Repeat("a", 32), "mcp-session-" + strings.Repeat("g", 32)}
	for _, b := range bad {
		if _, err := m.Validate(b); err == nil {
			t.Errorf("Validate(%q) accepted a malformed id", b)
		}
		if _, err := m.Terminate(b); err == nil {
			t.Errorf("Terminate(%q) accepted a malformed id", b)
		}
	}
	unknown := session.NewID()
	if _, err := m.Validate(unknown); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("Validate(unknown) = %v, want ErrNotFound", err)
	}
	if notAllowed, err := m.Terminate(id); err != nil || notAllowed {
		t.Fatalf("Terminate = %v, %v", notAllowed, err)
	}
	if _, err := m.Validate(id); err == nil {
		t.Fatal("Validate accepted a terminated session")
	}

	var reported []error
	fm := session.NewIDManager(failingStore{}, time.Hour)
	fm.OnError = func(err error) { reported = append(reported, err) }
	f := fm.For("key:alice")
	id = f.Generate()
	if !session.ValidID(id) || len(reported) != 1 || !strings.Contains(reported[0].Error(), "table is gone") {
		t.Fatalf("failed Create: id %q, reported %v", id, reported)
	}
	if _, err := f.Validate(id); err == nil || !strings.Contains(err.Error(), "table is gone") {
		t.Fatalf("Validate with a failing store: %v", err)
	}
	if strings.Contains(reported[0].Error(), id) {
		t.Fatalf("the reported error names the session id: %v", reported[0])
	}
}

// A session is bound to the principal that generated it: for any other
// principal it does not exist (Validate and Terminate fail as for an
// unknown id, and Terminate leaves it alive).
func TestIDManagerBindsPrincipal(t *testing.T) {
	store := session.NewMemory()
	ids := session.NewIDManager(store, time.Hour)
	alice, mallory := ids.For("key:alice"), ids.For("key:mallory")
	id := alice.Generate()
	_, errForeign := mallory.Validate(id)
	_, errUnknown := mallory.Validate(session.NewID())
	if !errors.Is(errForeign, session.ErrNotFound) || !errors.Is(errUnknown, session.ErrNotFound) {
		t.Fatalf("foreign Validate: %v; unknown: %v; want ErrNotFound for both", errForeign, errUnknown)
	}
	if strings.Contains(errForeign.Error(), id) || strings.Contains(errForeign.Error(), "mallory") || strings.Contains(errForeign.Error(), "alice") {
		t.Fatalf("the error tells more than \"not found\": %v", errForeign)
	}
	if _, err := mallory.Terminate(id); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("foreign Terminate: %v", err)
	}
	if _, err := alice.Validate(id); err != nil {
		t.Fatalf("the owner's session died of a foreign Terminate: %v", err)
	}
	if err := ids.Check(context.Background(), "key:alice", id); err != nil {
		t.Fatal(err)
	}
	if owner, live, _ := store.Owner(context.Background(), id); !live || owner != "key:alice" {
		t.Fatalf("Owner = %q, %v", owner, live)
	}
	if ref := session.Ref(id); strings.Contains(id, strings.TrimPrefix(ref, "s-")) || len(ref) != 10 {
		t.Fatalf("Ref(%s) = %q: not a short hash", id, ref)
	}
}

// Two gateway instances (two mcp-go servers) share one store: a session
// initialized on one continues on the other, and a DELETE on either ends it
// for both.
func TestIDManagerAcrossInstances(t *testing.T) {
	store := session.NewMemory()
	newInstance := func() *httptest.Server {
		s := server.NewMCPServer("gw", "1.0.0", server.WithToolCapabilities(false))
		s.AddTool(mcp.NewTool("ping", mcp.WithDescription("answers pong")), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("pong"), nil
		})
		h := server.NewStreamableHTTPServer(s, server.WithSessionIdManager(session.NewIDManager(store, time.Hour).For("key:test")))
		ts := httptest.NewServer(h)
		t.Cleanup(ts.Close)
		return ts
	}
	a, b := newInstance(), newInstance()

	post := func(url, sessionID string, body any) (*http.Response, string) {
		t.Helper()
		buf, _ := json.Marshal(body)
		req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(buf))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sessionID != "" {
			req.Header.Set("Mcp-Session-Id", sessionID)
			req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(out)
	}
	resp, body := post(a.URL, "", map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": mcp.LATEST_LEGACY_PROTOCOL_VERSION, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}}})
	sid := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != 200 || !session.ValidID(sid) {
		t.Fatalf("initialize on A: %d %q %s", resp.StatusCode, sid, body)
	}
	if ok, _ := store.Exists(context.Background(), sid); !ok {
		t.Fatal("initialize did not record the session in the store")
	}
	call := map[string]any{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": map[string]any{"name": "ping", "arguments": map[string]any{}}}
	resp, body = post(b.URL, sid, call)
	if resp.StatusCode != 200 || !strings.Contains(body, "pong") {
		t.Fatalf("tools/call on B with A's session: %d %s", resp.StatusCode, body)
	}
	resp, _ = post(b.URL, session.NewID(), call)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("unknown session: status %d, want 404", resp.StatusCode)
	}

	req, _ := http.NewRequest(http.MethodDelete, b.URL, nil)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	dresp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	dresp.Body.Close()
	if dresp.StatusCode != 200 {
		t.Fatalf("DELETE on B: %d", dresp.StatusCode)
	}
	resp, body = post(a.URL, sid, call)
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("call on A after DELETE on B: %d %s, want 404", resp.StatusCode, body)
	}
}

// A request whose session-store call failed is answered 503 with
// Retry-After and a JSON-RPC error that carries the request's id (the
// client matches the error to its request), for a session request and an
// initialize alike.
func TestGuardAnswers503WithRequestID(t *testing.T) {
	ids := session.NewIDManager(failingStore{}, time.Hour)
	s := server.NewMCPServer("gw", "1.0.0", server.WithToolCapabilities(false))
	ts := httptest.NewServer(ids.Guard(server.NewStreamableHTTPServer(s, server.WithSessionIdManager(ids.For("key:test")))))
	t.Cleanup(ts.Close)
	for _, tc := range []struct {
		name, sid, body, wantID string
	}{
		{"initialize", "", `{"jsonrpc":"2.0","id":"init-1","method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`, `"init-1"`},
		{"session request", session.NewID(), `{"jsonrpc":"2.0","id":42,"method":"tools/list"}`, `42`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest(http.MethodPost, ts.URL, strings.NewReader(tc.body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			if tc.sid != "" {
				req.Header.Set("Mcp-Session-Id", tc.sid)
				req.Header.Set("Mcp-Protocol-Version", mcp.LATEST_LEGACY_PROTOCOL_VERSION)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var msg struct {
				ID    json.RawMessage `json:"id"`
				Error struct {
					Code int `json:"code"`
				} `json:"error"`
			}
			if err := json.NewDecoder(resp.Body).Decode(&msg); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Mcp-Session-Id") != "" {
				t.Fatalf("status %d Retry-After %q session %q; want 503, Retry-After, no session id", resp.StatusCode, resp.Header.Get("Retry-After"), resp.Header.Get("Mcp-Session-Id"))
			}
			if string(msg.ID) != tc.wantID || msg.Error.Code != -32000 {
				t.Fatalf("JSON-RPC error id %s code %d; want id %s, code -32000", msg.ID, msg.Error.Code, tc.wantID)
			}
		})
	}
}
