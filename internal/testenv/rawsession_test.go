package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
)

// Against a real mcp-go server over HTTP: the session is initialized, and
// the upstream's JSON-RPC errors come back as written.
func TestRawSessionHTTP(t *testing.T) {
	s := OpenRawSession(t, PostTo(StartErrorUpstream(t)), "k", map[string]any{})
	if s.SessionID() == "" {
		t.Error("no Mcp-Session-Id after initialize")
	}
	if u := ElicitationURL(s.CallTool("needs_link", nil)); u != "https://upstream.example/connect?x=1" {
		t.Errorf("needs_link: elicitation URL %q", u)
	}
	if text, isErr := RawResultText(s.CallTool("quota", nil)); !isErr || !strings.Contains(text, "quota exhausted") {
		t.Errorf("quota: %v %q", isErr, text)
	}
}

// Over a RawPost of the test's own: the headers each POST carries, and a
// response found in an SSE stream after a notification.
func TestRawSessionPost(t *testing.T) {
	var got []http.Header
	post := func(_ context.Context, body []byte, h http.Header) (*RawAnswer, error) {
		got = append(got, h.Clone())
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if err := json.Unmarshal(body, &m); err != nil {
			return nil, err
		}
		if m.ID == nil {
			return &RawAnswer{StatusCode: http.StatusAccepted, Header: http.Header{}}, nil
		}
		if m.Method == "initialize" {
			return &RawAnswer{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}, "Mcp-Session-Id": {"sid-1"}},
				Body: fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"result":{}}`, m.ID)}, nil
		}
		return &RawAnswer{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}},
			Body: fmt.Appendf(nil, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"+
				"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":%s,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"a\"},{\"type\":\"text\",\"text\":\"b\"}]}}\n\n", m.ID)}, nil
	}
	s := OpenRawSession(t, post, "k-1", nil)
	if text, isErr := RawResultText(s.CallTool("t", nil)); isErr || text != "a\nb" {
		t.Errorf("call: %v %q", isErr, text)
	}
	if len(got) != 3 {
		t.Fatalf("%d POSTs, want 3 (initialize, initialized, call)", len(got))
	}
	for i, h := range got {
		wantSID := "sid-1"
		if i == 0 {
			wantSID = ""
		}
		if h.Get("Authorization") != "Bearer k-1" || h.Get("MCP-Protocol-Version") != "2025-11-25" ||
			h.Get("Mcp-Session-Id") != wantSID || !strings.Contains(h.Get("Accept"), "text/event-stream") {
			t.Errorf("POST %d headers: %v", i, h)
		}
	}
}

func TestRawResultText(t *testing.T) {
	for _, c := range []struct {
		name    string
		msg     string
		text    string
		isError bool
	}{
		{"text parts", `{"result":{"content":[{"type":"text","text":"x"},{"type":"image"},{"type":"text","text":"y"}]}}`, "x\ny", false},
		{"tool error", `{"result":{"content":[{"type":"text","text":"bad"}],"isError":true}}`, "bad", true},
		{"JSON-RPC error", `{"error":{"code":-32602,"message":"no such tool"}}`, "map[code:-32602 message:no such tool]", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var msg map[string]any
			if err := json.Unmarshal([]byte(c.msg), &msg); err != nil {
				t.Fatal(err)
			}
			if text, isErr := RawResultText(msg); text != c.text || isErr != c.isError {
				t.Errorf("RawResultText = %q, %v; want %q, %v", text, isErr, c.text, c.isError)
			}
		})
	}
}

func TestElicitationURL(t *testing.T) {
	const el = `{"mode":"url","elicitationId":"e","url":"https://x/c"}`
	for _, c := range []struct{ name, msg, want string }{
		{"one URL elicitation", `{"error":{"code":-32042,"data":{"elicitations":[` + el + `]}}}`, "https://x/c"},
		{"other code", `{"error":{"code":-32603,"data":{"elicitations":[` + el + `]}}}`, ""},
		{"two elicitations", `{"error":{"code":-32042,"data":{"elicitations":[` + el + `,` + el + `]}}}`, ""},
		{"form mode", `{"error":{"code":-32042,"data":{"elicitations":[{"mode":"form","elicitationId":"e","url":"https://x/c"}]}}}`, ""},
		{"a result", `{"result":{"content":[]}}`, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var msg map[string]any
			if err := json.Unmarshal([]byte(c.msg), &msg); err != nil {
				t.Fatal(err)
			}
			if got := ElicitationURL(msg); got != c.want {
				t.Errorf("ElicitationURL = %q, want %q", got, c.want)
			}
		})
	}
}

func TestPostForm(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.FormValue("key") != "k-1" {
			http.Error(w, "want a POST of key", http.StatusBadRequest)
			return
		}
		http.Redirect(w, r, "/done", http.StatusSeeOther)
	}))
	t.Cleanup(srv.Close)
	if code, page := PostForm(t, srv.URL+"/connect/x", url.Values{"key": {"k-1"}}); code != http.StatusSeeOther {
		t.Errorf("PostForm: %d %s, want the redirect itself (303)", code, page)
	}
}
