package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/auth"
	"github.com/toolrag/mcp-gateway/pkg/config"
	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/session"
)

const fastKeys = fuzzKeys + `  - id: limited
    secret: "fz-limited-secret"
    servers: {alpha: {}}
    rate_limit: {rate: 0.001, burst: 8}
  - id: limited2
    secret: "fz-limited2-secret"
    servers: {alpha: {}}
    rate_limit: {rate: 0.001, burst: 8}
`

// fastPair is two gateways over the same catalog and upstreams, served over
// real HTTP: [0] answers every tools/call through mcp-go (NoFastCall), [1]
// through the gateway's own path where it can.
type fastPair struct {
	url [2]string
	gw  [2]*gateway.Server
}

func newFastPair(t testing.TB, up *server.MCPServer) *fastPair {
	t.Helper()
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	mgr, st, rt := syncedCatalog(t, up, 10*time.Second)
	keys, err := config.ParseKeys("keys.yaml", []byte(fastKeys))
	if err != nil {
		t.Fatal(err)
	}
	p := &fastPair{}
	for i := range 2 {
		sessions := session.NewMemory()
		gw, err := gateway.New(gateway.Config{Catalog: st, Upstreams: mgr, Retriever: rt, Sessions: sessions, Logger: log})
		if err != nil {
			t.Fatal(err)
		}
		if err := gw.Reload(ctx); err != nil {
			t.Fatal(err)
		}
		h := gw.Handler(gateway.HTTPOptions{SessionIDs: session.NewIDManager(sessions, time.Hour), NoFastCall: i == 0})
		srv := httptest.NewServer(auth.Middleware(auth.Config{Keys: auth.NewStaticKeys(keys)}, h))
		t.Cleanup(srv.Close)
		p.url[i], p.gw[i] = srv.URL+"/mcp", gw
	}
	return p
}

// answer is what a client sees of a response.
type answer struct {
	status      int
	contentType string
	body        string
}

func post(t testing.TB, url string, header http.Header, body string) answer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = header.Clone()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header.Get("Content-Type"), string(b)}
}

var fastSecrets = map[string]string{"admin": "fz-admin-secret", "agent": "fz-agent-secret", "limited": "fz-limited-secret", "limited2": "fz-limited2-secret"}

// legacySession initialises a 2025-11-25 session of key on url.
func legacySession(t testing.TB, url, key string) string {
	t.Helper()
	return legacySessionWith(t, url, key, `{}`)
}

// legacySessionWith is legacySession for a client declaring capabilities.
func legacySessionWith(t testing.TB, url, key, capabilities string) string {
	t.Helper()
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Authorization": {"Bearer " + fastSecrets[key]}}
	body := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + mcp.LATEST_LEGACY_PROTOCOL_VERSION +
		`","capabilities":` + capabilities + `,"clientInfo":{"name":"same-bytes","version":"1"}}}`
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header = h
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	sid := resp.Header.Get(server.HeaderKeySessionID)
	if resp.StatusCode != http.StatusOK || sid == "" {
		t.Fatalf("initialize: %d, session %q", resp.StatusCode, sid)
	}
	h.Set(server.HeaderKeySessionID, sid)
	h.Set(mcp.HeaderProtocolVersion, mcp.LATEST_LEGACY_PROTOCOL_VERSION)
	if a := post(t, url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); a.status != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %+v", a)
	}
	return sid
}

// fastCase is one request, sent to both gateways.
type fastCase struct {
	name string
	key  string
	tool string
	// params of tools/call after the name (",..."), or a whole body in raw.
	params string
	raw    string
	id     string // JSON id; default 1
	// legacy only: the session header names this key's session instead.
	otherSession string
	badSession   bool
	// progress adds a progress token.
	progress bool
	fast     bool   // the gateway's own path answers it
	want     string // the answer must contain this
}

// TestFastCallSameBytes sends a table of tools/call requests to a gateway
// answering them through mcp-go and to one answering them itself, on a
// 2025-11-25 session and as 2026-07-28 stateless requests, and compares what
// the clients read: status, content type and body, byte for byte. Each row
// also says whether the gateway's own path answered it, so that the
// comparison is not between two mcp-go answers.
func TestFastCallSameBytes(t *testing.T) {
	up := upstreamServer()
	up.AddTool(mcp.NewToolWithRawSchema("geo", "Say where.",
		json.RawMessage(`{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}},"required":["region"]}`)),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return mcp.NewToolResultText("in " + req.GetString("region", "")), nil
		})
	p := newFastPair(t, up)
	cases := []fastCase{
		{name: "direct call", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"hi"}`, fast: true, want: `"text":"hi"`},
		{name: "tool error", key: "admin", tool: "alpha__fail", params: `,"arguments":{"message":"boom"}`, fast: true, want: `"isError":true`},
		{name: "invalid arguments", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":5}`, fast: true, want: "invalid arguments for alpha__echo"},
		{name: "missing argument", key: "admin", tool: "alpha__add", params: `,"arguments":{"a":1}`, fast: true, want: "missing property"},
		{name: "unknown params member", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"u"},"extra":{"x":1}`, fast: true, want: `"text":"u"`},
		{name: "no arguments", key: "admin", tool: "alpha__fail", fast: true, want: "failed"},
		{name: "null arguments", key: "admin", tool: "alpha__fail", params: `,"arguments":null`, fast: true, want: "failed"},
		{name: "array arguments", key: "admin", tool: "alpha__echo", params: `,"arguments":[1,2]`, fast: true, want: "invalid arguments"},
		{name: "string id", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"s"}`, id: `"call-7"`, fast: true, want: `"id":"call-7"`},
		{name: "fractional id", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"f"}`, id: `2.5`, fast: true, want: `"id":2.5`},
		{name: "escaped string id", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"e"}`, id: `"a\"b\u00e9"`, fast: true, want: `"id":"a\"bé"`},
		{name: "negative exponent id", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"x"}`, id: `-1e3`, fast: true, want: `"id":-1000`},
		{name: "huge id", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"h"}`, id: `12345678901234567890`, fast: true, want: `"id":12345678901234567000`},
		{name: "run_tool", key: "agent", tool: "run_tool", params: `,"arguments":{"call_name":"alpha__add","arguments":{"a":1,"b":2}}`, fast: true, want: `"text":"3"`},
		{name: "run_tool, policy denial", key: "agent", tool: "run_tool", params: `,"arguments":{"call_name":"beta__echo","arguments":{"text":"x"}}`, fast: true, want: "not found"},
		{name: "direct call, policy denial", key: "agent", tool: "beta__echo", params: `,"arguments":{"text":"x"}`, fast: true, want: "tool 'beta__echo' not found"},
		{name: "direct call of a granted tool", key: "agent", tool: "alpha__echo", params: `,"arguments":{"text":"ok"}`, fast: true, want: `"text":"ok"`},
		{name: "run_tool, unknown tool", key: "admin", tool: "run_tool", params: `,"arguments":{"call_name":"alpha__nope"}`, fast: true, want: "not found"},
		{name: "run_tool, unknown field", key: "admin", tool: "run_tool", params: `,"arguments":{"call_name":"alpha__echo","args":{}}`, fast: true, want: `unknown field`},
		{name: "run_tools, rate-limited", key: "limited", tool: "run_tools",
			params: `,"arguments":{"calls":[` + strings.TrimSuffix(strings.Repeat(`{"call_name":"alpha__echo","arguments":{"text":"r"}},`, 10), ",") + `]}`,
			fast:   true, want: `"status":429`},
		{name: "describe_tool", key: "admin", tool: "describe_tool", params: `,"arguments":{"call_name":"alpha__add"}`, fast: true, want: `"tool_id":"alpha__add"`},
		{name: "find_tools", key: "admin", tool: "find_tools", params: `,"arguments":{"query":"add two numbers"}`, fast: true, want: "alpha__add"},
		{name: "unknown tool", key: "admin", tool: "alpha__nope", fast: false, want: "not found"},
		{name: "invalid tool name", key: "admin", tool: "alpha__bad\tname", fast: false, want: "invalid params"},
		{name: "progress token", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"p"}`, progress: true, fast: false, want: `"text":"p"`},
		{name: "malformed JSON", key: "admin", raw: `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo"`, fast: false},
		{name: "batch", key: "admin", raw: `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"b"}}}]`, fast: false},
		{name: "notification", key: "admin", raw: `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"n"}}}`, fast: false},
	}
	// On 2026-07-28 a parameter annotated with x-mcp-header travels in an
	// Mcp-Param-* header too, which mcp-go checks (this request lacks it).
	modernOnly := []fastCase{
		{name: "x-mcp-header parameter", key: "admin", tool: "alpha__geo", params: `,"arguments":{"region":"eu"}`, fast: false, want: "Mcp-Param-Region"},
	}
	legacyOnly := []fastCase{
		{name: "x-mcp-header parameter", key: "admin", tool: "alpha__geo", params: `,"arguments":{"region":"eu"}`, fast: true, want: "in eu"},
		// A client that can be asked for sampling is asked on the request's
		// own stream, which only mcp-go keeps.
		{name: "client declaring sampling", key: "admin", otherSession: "sampler", tool: "alpha__echo", params: `,"arguments":{"text":"s"}`, fast: false, want: `"text":"s"`},
		{name: "unknown session", key: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"u"}`, badSession: true, fast: false, want: "Invalid session ID"},
		{name: "another key's session", key: "agent", otherSession: "admin", tool: "alpha__echo", params: `,"arguments":{"text":"o"}`, fast: false, want: "Invalid session ID"},
		// find_tools registers what it found to an agent's session and tells
		// the client its tool list changed: an SSE answer, and from then on
		// every answer on that session is SSE.
		{name: "find_tools registering tools (SSE)", key: "agent", tool: "find_tools", params: `,"arguments":{"query":"echo text"}`, fast: true, want: "notifications/tools/list_changed"},
		{name: "run_tool on a session switched to SSE", key: "agent", tool: "run_tool", params: `,"arguments":{"call_name":"alpha__echo","arguments":{"text":"sse"}}`, fast: true, want: "event: message\ndata: "},
	}
	for _, era := range []string{"2025-11-25", "2026-07-28"} {
		t.Run(era, func(t *testing.T) {
			legacy := era == mcp.LATEST_LEGACY_PROTOCOL_VERSION
			sessions := map[string][2]string{}
			rows := append(append([]fastCase{}, cases...), modernOnly...)
			if legacy {
				for key := range fastSecrets {
					sessions[key] = [2]string{legacySession(t, p.url[0], key), legacySession(t, p.url[1], key)}
				}
				sessions["sampler"] = [2]string{legacySessionWith(t, p.url[0], "admin", `{"sampling":{}}`),
					legacySessionWith(t, p.url[1], "admin", `{"sampling":{}}`)}
				rows = append(append([]fastCase{}, cases...), legacyOnly...)
				// mcp-go answers a session's first call, which shows the
				// gateway how it answers that session.
				for name, sids := range sessions {
					key := name
					if name == "sampler" {
						key = "admin"
					}
					for i := range 2 {
						h := fastHeader(key, era, sids[i], "alpha__echo")
						if a := post(t, p.url[i], h, `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"w"}}}`); a.status != 200 {
							t.Fatalf("first call of %s: %+v", name, a)
						}
					}
				}
			}
			for _, tc := range rows {
				if tc.key == "limited" && !legacy {
					tc.key = "limited2" // a key of its own: the legacy rows spent limited's tokens
				}
				t.Run(tc.name, func(t *testing.T) {
					before := p.gw[1].Metrics.FastCalls.Load()
					var got [2]answer
					for i := range 2 {
						sid := sessions[tc.key][i]
						if tc.otherSession != "" {
							sid = sessions[tc.otherSession][i]
						}
						if tc.badSession {
							sid = session.NewID()
						}
						body := tc.raw
						if body == "" {
							body = fastBody(tc, era)
						}
						got[i] = post(t, p.url[i], fastHeader(tc.key, era, sid, tc.tool), body)
					}
					if got[0] != got[1] {
						t.Errorf("answers differ:\nmcp-go: %d %q\n%q\nfast:   %d %q\n%q", got[0].status, got[0].contentType, got[0].body,
							got[1].status, got[1].contentType, got[1].body)
					}
					if fast := p.gw[1].Metrics.FastCalls.Load() > before; fast != tc.fast {
						t.Errorf("answered by the gateway's own path: %v, want %v", fast, tc.fast)
					}
					if !strings.Contains(got[1].body, tc.want) {
						t.Errorf("answer %q lacks %q", got[1].body, tc.want)
					}
				})
			}
			if n := p.gw[0].Metrics.FastCalls.Load(); n != 0 {
				t.Errorf("the NoFastCall gateway answered %d calls itself", n)
			}
		})
	}
}

func fastHeader(key, era, sid, tool string) http.Header {
	h := http.Header{"Content-Type": {"application/json"}, "Accept": {"application/json, text/event-stream"},
		"Authorization": {"Bearer " + fastSecrets[key]}, mcp.HeaderProtocolVersion: {era}}
	if era == mcp.LATEST_LEGACY_PROTOCOL_VERSION {
		h.Set(server.HeaderKeySessionID, sid)
	} else {
		h.Set(mcp.HeaderMethod, string(mcp.MethodToolsCall))
		h.Set(mcp.HeaderName, tool)
	}
	return h
}

func fastBody(tc fastCase, era string) string {
	id := tc.id
	if id == "" {
		id = "1"
	}
	var meta []string
	if era != mcp.LATEST_LEGACY_PROTOCOL_VERSION {
		meta = append(meta, `"`+mcp.MetaKeyProtocolVersion+`":"`+era+`"`,
			`"`+mcp.MetaKeyClientInfo+`":{"name":"same-bytes","version":"1"}`, `"`+mcp.MetaKeyClientCapabilities+`":{}`)
	}
	if tc.progress {
		meta = append(meta, `"progressToken":"p-1"`)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":%q%s`, id, tc.tool, tc.params)
	if len(meta) > 0 {
		fmt.Fprintf(&b, `,"_meta":{%s}`, strings.Join(meta, ","))
	}
	b.WriteString("}}")
	return b.String()
}

// TestFastCallCancelled: notifications/cancelled alone (the call's HTTP
// request stays open) stops a call the gateway's own path answers, as it
// stops one mcp-go answers, and reaches the upstream.
func TestFastCallCancelled(t *testing.T) {
	up := upstreamServer()
	started, stopped := addBlockingTool(up)
	p := newFastPair(t, up)
	for i, name := range []string{"mcp-go", "fast"} {
		t.Run(name, func(t *testing.T) {
			era := mcp.LATEST_LEGACY_PROTOCOL_VERSION
			sid := legacySession(t, p.url[i], "admin")
			h := fastHeader("admin", era, sid, "alpha__echo")
			if a := post(t, p.url[i], h, `{"jsonrpc":"2.0","id":0,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"w"}}}`); a.status != 200 {
				t.Fatalf("first call: %+v", a)
			}
			before := p.gw[i].Metrics.FastCalls.Load()
			done := make(chan answer, 1)
			go func() {
				done <- post(t, p.url[i], h, `{"jsonrpc":"2.0","id":"slow-1","method":"tools/call","params":{"name":"alpha__block","arguments":{}}}`)
			}()
			select {
			case <-started:
			case <-time.After(30 * time.Second):
				t.Fatal("the call did not reach the upstream")
			}
			if a := post(t, p.url[i], h, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow-1","reason":"test"}}`); a.status != http.StatusAccepted {
				t.Fatalf("notifications/cancelled: %+v", a)
			}
			select {
			case err := <-stopped:
				if err != context.Canceled {
					t.Errorf("the upstream's work ended with %v, want context.Canceled", err)
				}
			case <-time.After(5 * time.Second): // before the upstream call's own timeout (10 s)
				t.Fatal("the upstream kept working after the client cancelled")
			}
			select {
			case a := <-done:
				if !strings.Contains(a.body, `"id":"slow-1"`) {
					t.Errorf("the cancelled call's answer: %+v", a)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("the cancelled call was not answered")
			}
			if fast := p.gw[i].Metrics.FastCalls.Load() > before; fast != (name == "fast") {
				t.Errorf("answered by the gateway's own path: %v", fast)
			}
		})
	}
}

// TestFastCallAfterBroadcast: a reload tells every session that the prompt
// and resource lists changed, after which mcp-go answers the session's
// POSTs as SSE, the notifications first. Both gateways answer the next
// calls the same, the gateway's own path from the second one on.
func TestFastCallAfterBroadcast(t *testing.T) {
	p := newFastPair(t, upstreamServer())
	era := mcp.LATEST_LEGACY_PROTOCOL_VERSION
	var sids [2]string
	for i := range 2 {
		sids[i] = legacySession(t, p.url[i], "admin")
	}
	call := func(text string) (got [2]answer, fast bool) {
		before := p.gw[1].Metrics.FastCalls.Load()
		for i := range 2 {
			got[i] = post(t, p.url[i], fastHeader("admin", era, sids[i], "alpha__echo"),
				`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"`+text+`"}}}`)
		}
		if got[0] != got[1] {
			t.Errorf("answers differ:\nmcp-go: %+v\nfast:   %+v", got[0], got[1])
		}
		return got, p.gw[1].Metrics.FastCalls.Load() > before
	}
	call("first")
	if got, fast := call("plain"); !fast || got[1].contentType != "application/json" {
		t.Fatalf("before the reload: fast %v, %+v", fast, got[1])
	}
	for i := range 2 {
		if err := p.gw[i].Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	got, fast := call("after")
	if fast || got[1].contentType != "text/event-stream" || !strings.Contains(got[1].body, "list_changed") {
		t.Errorf("first call after the reload: fast %v, %+v", fast, got[1])
	}
	got, fast = call("again")
	if !fast || got[1].contentType != "text/event-stream" {
		t.Errorf("second call after the reload: fast %v, %+v", fast, got[1])
	}
}

// TestFastCallAfterBroadcastOnStream: with the session's GET stream open,
// the reload's notifications go out on the stream, and the session is
// switched to SSE with nothing pending: its next call still goes to mcp-go
// (a broadcast happened since mcp-go last answered it), and both gateways
// answer it as SSE.
func TestFastCallAfterBroadcastOnStream(t *testing.T) {
	p := newFastPair(t, upstreamServer())
	era := mcp.LATEST_LEGACY_PROTOCOL_VERSION
	var sids [2]string
	streamed := make(chan int, 2)
	for i := range 2 {
		sids[i] = legacySession(t, p.url[i], "admin")
		h := fastHeader("admin", era, sids[i], "")
		if a := post(t, p.url[i], h, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"first"}}}`); a.status != 200 {
			t.Fatalf("first call: %+v", a)
		}
		ctx, cancel := context.WithCancel(context.Background())
		t.Cleanup(cancel)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.url[i], nil)
		req.Header = h.Clone()
		req.Header.Set("Accept", "text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET stream: %v %v", err, resp)
		}
		go func(i int) {
			defer resp.Body.Close()
			var seen bytes.Buffer
			buf := make([]byte, 4096)
			for {
				n, err := resp.Body.Read(buf)
				seen.Write(buf[:n])
				if strings.Count(seen.String(), "list_changed") >= 2 {
					streamed <- i
					return
				}
				if err != nil {
					return
				}
			}
		}(i)
	}
	time.Sleep(100 * time.Millisecond) // the GET handlers are reading the sessions' channels
	for i := range 2 {
		if err := p.gw[i].Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	for range 2 {
		select {
		case <-streamed:
		case <-time.After(10 * time.Second):
			t.Fatal("the reload's notifications did not reach the GET streams")
		}
	}
	for n, wantFast := range []bool{false, true} {
		before := p.gw[1].Metrics.FastCalls.Load()
		var got [2]answer
		for i := range 2 {
			got[i] = post(t, p.url[i], fastHeader("admin", era, sids[i], ""),
				`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"after"}}}`)
		}
		if got[0] != got[1] {
			t.Errorf("call %d after the reload: answers differ:\nmcp-go: %+v\nfast:   %+v", n+1, got[0], got[1])
		}
		if got[1].contentType != "text/event-stream" {
			t.Errorf("call %d after the reload: %+v, want SSE", n+1, got[1])
		}
		if fast := p.gw[1].Metrics.FastCalls.Load() > before; fast != wantFast {
			t.Errorf("call %d after the reload answered by the gateway's own path: %v, want %v", n+1, fast, wantFast)
		}
	}
}

// TestFastCallTouchesSessions: a session the gateway's own path serves
// still sends a request to mcp-go every touchEvery, so that mcp-go's idle
// sweeper (server.WithSessionIdleTTL) sees it active.
func TestFastCallTouchesSessions(t *testing.T) {
	defer gateway.SetTouchEvery(200 * time.Millisecond)()
	p := newFastPair(t, upstreamServer())
	era := mcp.LATEST_LEGACY_PROTOCOL_VERSION
	sid := legacySession(t, p.url[1], "admin")
	call := func() bool {
		before := p.gw[1].Metrics.FastCalls.Load()
		if a := post(t, p.url[1], fastHeader("admin", era, sid, ""),
			`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"t"}}}`); a.status != 200 {
			t.Fatalf("call: %+v", a)
		}
		return p.gw[1].Metrics.FastCalls.Load() > before
	}
	call() // mcp-go answers the first call
	if !call() {
		t.Fatal("the second call went to mcp-go")
	}
	time.Sleep(300 * time.Millisecond)
	if call() {
		t.Error("a call after touchEvery did not go to mcp-go")
	}
	if !call() {
		t.Error("the call after that went to mcp-go again")
	}
}

// TestFastCallRealClient: mcp-go's own client, on either protocol, gets its
// calls answered by the gateway's own path (after a session's first call
// on the legacy one), with the results mcp-go's path gives.
func TestFastCallRealClient(t *testing.T) {
	p := newFastPair(t, upstreamServer())
	for _, legacy := range []bool{true, false} {
		t.Run(fmt.Sprintf("legacy=%v", legacy), func(t *testing.T) {
			var res [2]*mcp.CallToolResult
			for i := range 2 {
				c, _ := testenv.Connect(t, p.url[i], testenv.MCPClient{Key: fastSecrets["agent"], Legacy: legacy})
				req := mcp.CallToolRequest{}
				req.Params.Name, req.Params.Arguments = "run_tool", map[string]any{"call_name": "alpha__add", "arguments": map[string]any{"a": 2, "b": 3}}
				for n := range 3 {
					before := p.gw[i].Metrics.FastCalls.Load()
					r, err := c.CallTool(context.Background(), req)
					if err != nil {
						t.Fatal(err)
					}
					res[i] = r
					fast := p.gw[i].Metrics.FastCalls.Load() > before
					if want := i == 1 && (n > 0 || !legacy); fast != want {
						t.Errorf("gateway %d, call %d: answered by the gateway's own path: %v, want %v", i, n, fast, want)
					}
				}
			}
			a, _ := json.Marshal(res[0])
			b, _ := json.Marshal(res[1])
			if !bytes.Equal(a, b) || !strings.Contains(string(b), `"text":"5"`) {
				t.Errorf("results differ:\nmcp-go: %s\nfast:   %s", a, b)
			}
		})
	}
}

// FuzzFastCallSameBytes sends arbitrary bodies, as tools/call requests on a
// 2025-11-25 session or as 2026-07-28 requests, to a gateway answering them
// through mcp-go and to one answering them itself where it can, and
// requires the same answer from both:
//
//	go test ./pkg/gateway -run '^$' -fuzz FuzzFastCallSameBytes -fuzztime 60s
func FuzzFastCallSameBytes(f *testing.F) {
	p := newFastPair(f, upstreamServer())
	sessions := map[string][2]string{}
	for key := range fastSecrets {
		sessions[key] = [2]string{legacySession(f, p.url[0], key), legacySession(f, p.url[1], key)}
	}
	f.Add([]byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":"hi"}}}`), byte(0))
	f.Add([]byte(`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"run_tool","arguments":{"call_name":"alpha__add","arguments":{"a":1,"b":2}}}}`), byte(1))
	f.Add([]byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha__echo","arguments":{"text":5},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), byte(4))
	f.Add([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"find_tools","arguments":{"query":"echo"}}}`), byte(1))
	f.Add([]byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"beta__echo","arguments":{}}}`), byte(1))
	f.Fuzz(func(t *testing.T, body []byte, mode byte) {
		key := []string{"admin", "agent"}[mode&1]
		era := mcp.LATEST_LEGACY_PROTOCOL_VERSION
		if mode&4 != 0 {
			era = mcp.LATEST_PROTOCOL_VERSION
		}
		var got [2]answer
		for i := range 2 {
			h := fastHeader(key, era, sessions[key][i], "")
			req, err := http.NewRequest(http.MethodPost, p.url[i], bytes.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header = h
			if era != mcp.LATEST_LEGACY_PROTOCOL_VERSION {
				req.Header.Del(mcp.HeaderName)
				setStandardHeaders(req, body)
			}
			got[i] = post(t, p.url[i], req.Header, string(body))
		}
		if got[0] != got[1] {
			t.Fatalf("answers differ for %s (%s, %s):\nmcp-go: %+v\nfast:   %+v", body, key, era, got[0], got[1])
		}
	})
}

// TestFastCallConcurrent: calls on several sessions and stateless requests
// at once, with reloads (broadcasts) in between, all answered correctly
// (run with -race).
func TestFastCallConcurrent(t *testing.T) {
	p := newFastPair(t, upstreamServer())
	url := p.url[1]
	var wg sync.WaitGroup
	errs := make(chan string, 64)
	for s := range 4 {
		for _, era := range []string{mcp.LATEST_LEGACY_PROTOCOL_VERSION, mcp.LATEST_PROTOCOL_VERSION} {
			sid := ""
			if era == mcp.LATEST_LEGACY_PROTOCOL_VERSION {
				sid = legacySession(t, url, "admin")
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				for n := range 25 {
					text := fmt.Sprintf("s%d-%d", s, n)
					tc := fastCase{tool: "alpha__echo", params: `,"arguments":{"text":"` + text + `"}`, id: fmt.Sprint(n + 1)}
					a := post(t, url, fastHeader("admin", era, sid, "alpha__echo"), fastBody(tc, era))
					if a.status != http.StatusOK || !strings.Contains(a.body, `"text":"`+text+`"`) {
						errs <- fmt.Sprintf("%s call %d: %+v", era, n, a)
						return
					}
				}
			}()
		}
	}
	for range 3 {
		if err := p.gw[1].Reload(context.Background()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if p.gw[1].Metrics.FastCalls.Load() == 0 {
		t.Error("no call took the gateway's own path")
	}
}
