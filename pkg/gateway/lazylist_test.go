package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

// With LazyToolList the gateway answers exactly as with the list built at
// reload: an agent's tools/list (meta-tools, then the tools find_tools
// registered to its session), its tools/call by name, an admin's
// tools/list. The list is built only by the call by name or the admin's
// listing, never by an agent's listing or find_tools, and a reload before
// that touches no mcp-go state.
func TestLazyToolListAnswersAsBuilt(t *testing.T) {
	ctx := context.Background()
	st := tempCatalog(t)
	put := func(srv string, names ...string) {
		t.Helper()
		var tools []catalog.Tool
		for _, n := range names {
			tools = append(tools, catalog.Tool{Server: srv, Name: n, Description: "Send " + strings.ReplaceAll(n, "_", " ") + " to a chat channel.",
				InputSchema: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}}}`)})
		}
		putTools(t, st, srv, tools...)
	}
	put("chat", "send_message", "send_file", "zap_channel")
	put("ops", "send_alert", "restart")

	type gw struct {
		g *Server
		h http.Handler
	}
	newGW := func(lazy bool) gw {
		r, err := retrieve.New(retrieve.Config{Tools: st})
		if err != nil {
			t.Fatal(err)
		}
		sessions := session.NewMemory()
		g, err := New(Config{Catalog: st, Upstreams: &callRecorder{}, Retriever: r, Sessions: sessions,
			Unprefixed: map[string]bool{"ops": true}, Logger: slog.New(slog.DiscardHandler), LazyToolList: lazy})
		if err != nil {
			t.Fatal(err)
		}
		if err := g.ReloadTools(ctx); err != nil {
			t.Fatal(err)
		}
		return gw{g, g.Handler(HTTPOptions{SessionIDs: session.NewIDManager(sessions, time.Hour)})}
	}
	agent := policy.For(policy.Key{ID: "agent", Servers: map[string]policy.Rule{"chat": {}}})
	admin := policy.For(policy.Key{ID: "admin", Admin: true, Servers: map[string]policy.Rule{"chat": {}, "ops": {}}})
	sids := regexp.MustCompile(`"(mcp-session-[^"]*|[0-9a-f-]{36})"`)
	post := func(x gw, pol policy.Policy, sid *string, body string) string {
		t.Helper()
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if *sid != "" {
			req.Header.Set("Mcp-Session-Id", *sid)
		}
		rec := httptest.NewRecorder()
		x.h.ServeHTTP(rec, req.WithContext(policy.NewContext(req.Context(), pol)))
		if *sid == "" {
			*sid = rec.Header().Get("Mcp-Session-Id")
		}
		b, _ := io.ReadAll(rec.Body)
		// The messages, whether answered as JSON or as an SSE stream.
		var msgs []string
		for _, line := range strings.Split(string(b), "\n") {
			// tools/list_changed notifications are left out: mcp-go
			// queues them to every open session, and which response
			// carries one depends on timing (the lazy build sends one
			// more, once).
			if m, ok := strings.CutPrefix(line, "data: "); ok && !strings.Contains(m, `"notifications/tools/list_changed"`) {
				msgs = append(msgs, m)
			}
		}
		if len(msgs) == 0 {
			msgs = []string{strings.TrimSpace(string(b))}
		}
		return fmt.Sprintf("%d %s", rec.Code, sids.ReplaceAllString(strings.Join(msgs, "\n"), `"SID"`))
	}
	const init = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	const initialized = `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	const list = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	steps := []struct {
		name      string
		admin     bool
		body      string
		wantBuilt bool // of the lazy gateway after the step
		want      []string
	}{
		{"agent initialize", false, init, false, nil},
		{"agent initialized", false, initialized, false, nil},
		{"agent tools/list", false, list, false, []string{`"find_tools"`}},
		{"agent find_tools", false, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"send a message to a chat channel","top_k":2}}}`, false, []string{"chat__send_message"}},
		{"agent tools/list with registered tools", false, list, false, []string{`"chat__send_message"`, `"find_tools"`}},
		{"agent tools/call by name", false, `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"chat__send_message","arguments":{"text":"hi"}}}`, true, []string{`"ok"`}},
		{"agent tools/list after the build", false, list, true, []string{`"chat__send_message"`}},
		{"admin initialize", true, init, true, nil},
		{"admin initialized", true, initialized, true, nil},
		{"admin tools/list", true, list, true, []string{`"chat__zap_channel"`, `"send_alert"`, `"restart"`}},
	}
	eager, lazy := newGW(false), newGW(true)
	lazyAdmin := newGW(true) // an admin's listing alone builds the list
	var sidE, sidL, sidEA, sidLA, sidLA2 string
	for _, s := range steps {
		pol, se, sl := agent, &sidE, &sidL
		if s.admin {
			pol, se, sl = admin, &sidEA, &sidLA
		}
		e, l := post(eager, pol, se, s.body), post(lazy, pol, sl, s.body)
		if e != l {
			t.Fatalf("%s: lazy answered\n%s\nthe built list\n%s", s.name, l, e)
		}
		for _, w := range s.want {
			if !strings.Contains(l, w) {
				t.Fatalf("%s: %s lacks %s", s.name, l, w)
			}
		}
		if got := lazy.g.listBuilt.Load(); got != s.wantBuilt {
			t.Fatalf("%s: list built %v, want %v", s.name, got, s.wantBuilt)
		}
		if !s.wantBuilt && len(lazy.g.MCPServer().ListTools()) != len(lazy.g.metaTools()) {
			t.Fatalf("%s: mcp-go holds %d tools before the build", s.name, len(lazy.g.MCPServer().ListTools()))
		}
		if s.admin {
			if a := post(lazyAdmin, admin, &sidLA2, s.body); a != e {
				t.Fatalf("%s on a fresh lazy gateway: %s, want %s", s.name, a, e)
			}
		}
	}
	// After the build a reload keeps mcp-go's list current.
	put("chat", "send_message", "send_file", "zap_channel", "new_tool")
	for _, x := range []gw{eager, lazy} {
		if err := x.g.ReloadTools(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if _, ok := lazy.g.MCPServer().ListTools()["chat__new_tool"]; !ok {
		t.Fatal("a reload after the build did not register the new tool")
	}
	if e, l := post(eager, admin, &sidEA, list), post(lazy, admin, &sidLA, list); e != l || !strings.Contains(l, "chat__new_tool") {
		t.Fatalf("admin tools/list after the reload: lazy %s, built %s", l, e)
	}
}
