package testenv

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
)

// RawAnswer is the HTTP answer to one POST of a RawSession.
type RawAnswer struct {
	StatusCode int
	Header     http.Header
	Body       []byte
}

// RawPost carries one POST of a RawSession (a JSON-RPC message as body,
// with header) to the gateway and returns its answer: over HTTP (PostTo),
// or through whatever stands in front of a gateway in a test.
type RawPost func(ctx context.Context, body []byte, header http.Header) (*RawAnswer, error)

// PostTo is the RawPost of the MCP endpoint at url, over HTTP.
func PostTo(url string) RawPost {
	return func(ctx context.Context, body []byte, header http.Header) (*RawAnswer, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
		if err != nil {
			return nil, err
		}
		req.Header = header
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("read the answer of %s: %w", url, err)
		}
		return &RawAnswer{StatusCode: resp.StatusCode, Header: resp.Header, Body: b}, nil
	}
}

// RawSession is a 2025-11-25 MCP session written by hand: JSON-RPC byte
// for byte, so a test sees exactly what the gateway wrote (its error
// objects, its tool results). Every POST carries the key as a bearer
// token and the session id once the gateway gave one.
type RawSession struct {
	t    testing.TB
	post RawPost
	key  string
	sid  string
	ids  atomic.Int64
}

// OpenRawSession initializes a session over post whose client declares
// caps, and sends notifications/initialized. An initialize error ends the
// test.
func OpenRawSession(t testing.TB, post RawPost, key string, caps map[string]any) *RawSession {
	t.Helper()
	s := &RawSession{t: t, post: post, key: key}
	msg := s.Request("initialize", map[string]any{
		"protocolVersion": "2025-11-25",
		"capabilities":    caps,
		"clientInfo":      map[string]any{"name": "raw", "version": "1"},
	})
	if msg["error"] != nil {
		t.Fatalf("initialize: %v", msg["error"])
	}
	s.Notify("notifications/initialized")
	return s
}

// SessionID is the Mcp-Session-Id the gateway gave ("" for none).
func (s *RawSession) SessionID() string { return s.sid }

// Post sends msg (marshalled to JSON) as it is and returns the answer; a
// failure to send ends the test.
func (s *RawSession) Post(msg any) *RawAnswer {
	s.t.Helper()
	b, err := json.Marshal(msg)
	if err != nil {
		s.t.Fatal(err)
	}
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Authorization", "Bearer "+s.key)
	h.Set("MCP-Protocol-Version", "2025-11-25")
	if s.sid != "" {
		h.Set("Mcp-Session-Id", s.sid)
	}
	a, err := s.post(context.Background(), b, h)
	if err != nil {
		s.t.Fatal(err)
	}
	if sid := a.Header.Get("Mcp-Session-Id"); sid != "" {
		s.sid = sid
	}
	return a
}

// Notify sends the notification method without params.
func (s *RawSession) Notify(method string) {
	s.t.Helper()
	s.Post(map[string]any{"jsonrpc": "2.0", "method": method})
}

// Request sends one request and returns its response message, from a JSON
// body or from the SSE stream of the POST; no response ends the test.
func (s *RawSession) Request(method string, params any) map[string]any {
	s.t.Helper()
	id := s.ids.Add(1)
	a := s.Post(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	for _, f := range messagesOf(a) {
		var m map[string]any
		if json.Unmarshal(f, &m) == nil && m["id"] != nil && fmt.Sprint(m["id"]) == fmt.Sprint(id) {
			return m
		}
	}
	s.t.Fatalf("%s: no response in %d %q", method, a.StatusCode, a.Body)
	return nil
}

// CallTool calls a tool and returns the response message.
func (s *RawSession) CallTool(name string, args map[string]any) map[string]any {
	s.t.Helper()
	return s.Request("tools/call", map[string]any{"name": name, "arguments": args})
}

// messagesOf returns the JSON-RPC messages of an answer: its body, or the
// data of each event of an SSE stream.
func messagesOf(a *RawAnswer) [][]byte {
	if !strings.HasPrefix(a.Header.Get("Content-Type"), "text/event-stream") {
		return [][]byte{a.Body}
	}
	var msgs [][]byte
	sc := bufio.NewScanner(bytes.NewReader(a.Body))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			msgs = append(msgs, []byte(strings.TrimSpace(d)))
		}
	}
	return msgs
}

// RawResultText returns the text content of a tools/call response message,
// joined by newlines, and whether it is an error: a tool error, or a
// JSON-RPC error (then the text is that error).
func RawResultText(msg map[string]any) (text string, isError bool) {
	res, _ := msg["result"].(map[string]any)
	if res == nil {
		return fmt.Sprint(msg["error"]), true
	}
	var parts []string
	content, _ := res["content"].([]any)
	for _, c := range content {
		if m, ok := c.(map[string]any); ok {
			if s, ok := m["text"].(string); ok {
				parts = append(parts, s)
			}
		}
	}
	return strings.Join(parts, "\n"), res["isError"] == true
}

// ElicitationURL returns the URL of a response message that is a -32042
// error with one URL elicitation ("" if it is not one).
func ElicitationURL(msg map[string]any) string {
	e, _ := msg["error"].(map[string]any)
	if e == nil || e["code"] != float64(-32042) {
		return ""
	}
	data, _ := e["data"].(map[string]any)
	els, _ := data["elicitations"].([]any)
	if len(els) != 1 {
		return ""
	}
	el, _ := els[0].(map[string]any)
	if el["mode"] != "url" || el["elicitationId"] == "" {
		return ""
	}
	u, _ := el["url"].(string)
	return u
}

// PostForm submits form to a connect link (an ElicitationURL, say) as a
// fresh browser does, following no redirect, and returns the status and
// the page.
func PostForm(t testing.TB, link string, form url.Values) (status int, page string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, link, strings.NewReader(form.Encode()))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	status, _, page = NewUserAgent(t).Do(req)
	return status, page
}
