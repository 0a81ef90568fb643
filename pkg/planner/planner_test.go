package planner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

var candidates = []Candidate{
	{CallName: "weather__get_forecast", Description: "Weather forecast for a city", ToolType: "query",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`)},
	{CallName: "mail__send_email", Description: "Send an email", ToolType: "action",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"to":{"type":"string"},"body":{"type":"string"}}}`)},
	{CallName: "fs__read_file", Description: "Read a file", ToolType: "query"},
}

// chatServer is an OpenAI-shaped chat-completions endpoint that checks the
// request and answers with content (or a raw body when raw is set).
type chatServer struct {
	t       *testing.T
	key     string
	content string
	raw     string
	status  int
	got     map[string]any
	calls   int
}

func (c *chatServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	c.calls++
	if r.Method != http.MethodPost || r.URL.Path != "/v1/chat/completions" {
		c.t.Errorf("got %s %s", r.Method, r.URL.Path)
	}
	if c.key != "" && r.Header.Get("Authorization") != "Bearer "+c.key {
		c.t.Errorf("Authorization = %q", r.Header.Get("Authorization"))
	}
	if c.key == "" && r.Header.Get("Authorization") != "" {
		c.t.Errorf("Authorization sent without a key: %q", r.Header.Get("Authorization"))
	}
	raw, _ := io.ReadAll(r.Body)
	if err := json.Unmarshal(raw, &c.got); err != nil {
		c.t.Errorf("request is not JSON: %v", err)
	}
	if c.status != 0 {
		w.WriteHeader(c.status)
	}
	if c.raw != "" {
		fmt.Fprint(w, c.raw)
		return
	}
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": "m",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": c.content}}},
	})
}

func newTest(t *testing.T, c *chatServer) *Planner {
	t.Helper()
	c.t = t
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	p, err := New(Config{URL: srv.URL + "/v1/chat/completions", Model: "qwen2.5:14b-instruct", APIKey: c.key, Temperature: 0.1, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPlanRequestShape(t *testing.T) {
	c := &chatServer{key: "sk-plan", content: `{"steps":[],"notes":"","missing":[]}`}
	p := newTest(t, c)
	if _, err := p.Plan(context.Background(), "forecast for Paris", candidates); err != nil {
		t.Fatal(err)
	}
	if c.got["model"] != "qwen2.5:14b-instruct" || c.got["temperature"] != 0.1 {
		t.Errorf("model/temperature: %v %v", c.got["model"], c.got["temperature"])
	}
	if !reflect.DeepEqual(c.got["response_format"], map[string]any{"type": "json_object"}) {
		t.Errorf("response_format = %v", c.got["response_format"])
	}
	msgs, _ := c.got["messages"].([]any)
	if len(msgs) != 2 {
		t.Fatalf("messages = %v", c.got["messages"])
	}
	sys, user := msgs[0].(map[string]any), msgs[1].(map[string]any)
	if sys["role"] != "system" || !strings.Contains(sys["content"].(string), `"call_name"`) || !strings.Contains(sys["content"].(string), "depends_on") {
		t.Errorf("system message does not explain the plan format: %v", sys)
	}
	if user["role"] != "user" {
		t.Errorf("second message role %v", user["role"])
	}
	var u struct {
		Task  string `json:"task"`
		Tools []struct {
			CallName    string          `json:"call_name"`
			ToolType    string          `json:"tool_type"`
			InputSchema json.RawMessage `json:"input_schema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal([]byte(user["content"].(string)), &u); err != nil {
		t.Fatalf("user message is not JSON: %v", err)
	}
	if u.Task != "forecast for Paris" || len(u.Tools) != 3 || u.Tools[0].CallName != "weather__get_forecast" || u.Tools[0].ToolType != "query" ||
		!strings.Contains(string(u.Tools[0].InputSchema), `"city"`) {
		t.Errorf("user message = %+v", u)
	}
}

func TestPlanParsing(t *testing.T) {
	tests := []struct {
		name    string
		content string
		want    Plan
		wantErr string
	}{
		{
			name: "clean plan",
			content: `{"steps":[{"id":"s1","call_name":"weather__get_forecast","arguments_hint":{"city":"Paris"},"depends_on":[],"group":1,"tool_type":"query"},
				{"id":"s2","call_name":"mail__send_email","arguments_hint":{"to":"bob","body":"<from s1>"},"depends_on":["s1"],"group":2,"tool_type":"action"}],
				"notes":"send after reading","missing":[]}`,
			want: Plan{Steps: []Step{
				{ID: "s1", CallName: "weather__get_forecast", ArgumentsHint: json.RawMessage(`{"city":"Paris"}`), DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "s2", CallName: "mail__send_email", ArgumentsHint: json.RawMessage(`{"to":"bob","body":"<from s1>"}`), DependsOn: []string{"s1"}, Group: 2, ToolType: "action"},
			}, Notes: "send after reading", Missing: []string{}},
		},
		{
			name: "code fence, numeric ids, single dependency, missing group",
			content: "Here is the plan:\n```json\n" +
				`{"steps":[{"id":1,"call_name":"weather__get_forecast","arguments_hint":{"city":"Oslo"}},{"id":2,"call_name":"mail__send_email","depends_on":1}],"notes":["a","b"]}` +
				"\n```\nGood luck.",
			want: Plan{Steps: []Step{
				{ID: "1", CallName: "weather__get_forecast", ArgumentsHint: json.RawMessage(`{"city":"Oslo"}`), DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "2", CallName: "mail__send_email", DependsOn: []string{"1"}, Group: 2, ToolType: "action"},
			}, Notes: "a b", Missing: []string{}},
		},
		{
			name: "hallucinated tool dropped with dependencies on it",
			content: `{"steps":[{"id":"s1","call_name":"weather__get_forecast","group":1},
				{"id":"s2","call_name":"translate__translate_text","depends_on":["s1"],"group":2},
				{"id":"s3","call_name":"mail__send_email","depends_on":["s2","s1"],"group":3}],
				"missing":["a translation tool"]}`,
			want: Plan{Steps: []Step{
				{ID: "s1", CallName: "weather__get_forecast", DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "s3", CallName: "mail__send_email", DependsOn: []string{"s1"}, Group: 2, ToolType: "action"},
			}, Missing: []string{"a translation tool", "translate__translate_text"}},
		},
		{
			name:    "short and differently cased names resolve to the unique candidate",
			content: `{"steps":[{"id":"a","tool":"read_file","arguments":{"path":"/tmp/x"}},{"id":"b","call_name":"MAIL__SEND_EMAIL","depends_on":["a","a","b","zz"]}]}`,
			want: Plan{Steps: []Step{
				{ID: "a", CallName: "fs__read_file", ArgumentsHint: json.RawMessage(`{"path":"/tmp/x"}`), DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "b", CallName: "mail__send_email", DependsOn: []string{"a"}, Group: 2, ToolType: "action"},
			}, Missing: []string{}},
		},
		{
			name: "parallel group kept, dependencies reorder, groups renumbered",
			content: `{"steps":[{"id":"c","call_name":"mail__send_email","depends_on":["a","b"],"group":9},
				{"id":"a","call_name":"weather__get_forecast","group":3},{"id":"b","call_name":"fs__read_file","group":3}]}`,
			want: Plan{Steps: []Step{
				{ID: "a", CallName: "weather__get_forecast", DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "b", CallName: "fs__read_file", DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "c", CallName: "mail__send_email", DependsOn: []string{"a", "b"}, Group: 2, ToolType: "action"},
			}, Missing: []string{}},
		},
		{
			name:    "duplicate and missing ids are renamed",
			content: `{"plan":{"steps":[{"id":"x","call_name":"fs__read_file"},{"id":"x","call_name":"fs__read_file"},{"call_name":"fs__read_file"}]}}`,
			want: Plan{Steps: []Step{
				{ID: "x", CallName: "fs__read_file", DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "s2", CallName: "fs__read_file", DependsOn: []string{}, Group: 1, ToolType: "query"},
				{ID: "s3", CallName: "fs__read_file", DependsOn: []string{}, Group: 1, ToolType: "query"},
			}, Missing: []string{}},
		},
		{
			name:    "only hallucinations",
			content: `{"steps":[{"id":"s1","call_name":"stripe__charge"}],"notes":"no payment tool","missing":"payments"}`,
			want:    Plan{Steps: []Step{}, Notes: "no payment tool", Missing: []string{"payments", "stripe__charge"}},
		},
		{name: "truncated", content: `{"steps": [ {"id": "s1", "call_name": `, wantErr: "not a JSON plan"},
		{name: "malformed", content: `{"steps": [ {"id": "s1", "call_name": } ] }`, wantErr: "not a valid JSON plan"},
		{name: "prose", content: `I cannot help with that.`, wantErr: "not a JSON plan"},
		{name: "no steps", content: `{"answer": "do it yourself"}`, wantErr: `no "steps"`},
		{name: "cycle", content: `{"steps":[{"id":"a","call_name":"fs__read_file","depends_on":["b"]},{"id":"b","call_name":"mail__send_email","depends_on":["a"]}]}`, wantErr: "cycle among steps a, b"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := newTest(t, &chatServer{content: tc.content})
			got, err := p.Plan(context.Background(), "do the task", candidates)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				g, _ := json.Marshal(got)
				w, _ := json.Marshal(tc.want)
				t.Errorf("plan\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestPlanHTTPErrors(t *testing.T) {
	tests := []struct {
		name    string
		c       chatServer
		wantErr string
	}{
		{"500 with key echoed", chatServer{key: "sk-zz", status: 500, raw: `{"error":"model crashed for sk-zz"}`}, "500 Internal Server Error: {\"error\":\"model crashed for [redacted]\"}"},
		{"not JSON", chatServer{raw: `<html>`}, "malformed JSON"},
		{"no choices", chatServer{raw: `{"choices":[]}`}, "without choices"},
		{"empty content", chatServer{raw: `{"choices":[{"message":{"content":""},"finish_reason":"stop"}]}`}, "empty reply"},
		{"cut off", chatServer{raw: `{"choices":[{"message":{"content":"{\"steps\":["},"finish_reason":"length"}]}`}, "cut off"},
		{"content parts", chatServer{raw: `{"choices":[{"message":{"content":[{"type":"text","text":"{\"steps\":"},{"type":"text","text":"[]}"}]},"finish_reason":"stop"}]}`}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := tc.c
			p := newTest(t, &c)
			_, err := p.Plan(context.Background(), "q", candidates)
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("err = %v, want it to contain %q", err, tc.wantErr)
			}
			if err != nil && c.key != "" && strings.Contains(err.Error(), c.key) {
				t.Errorf("error leaks the key: %v", err)
			}
		})
	}
}

func TestPlanTimeoutAndInput(t *testing.T) {
	srv := testenv.HangingServer(t)
	p, err := New(Config{URL: srv.URL + "/v1/chat/completions", Model: "m", Timeout: 40 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Plan(context.Background(), "q", candidates); err == nil || !strings.Contains(err.Error(), "did not answer within 40ms") {
		t.Errorf("err = %v", err)
	}
	if _, err := p.Plan(context.Background(), " ", candidates); err == nil {
		t.Error("empty query: want an error")
	}
	if _, err := p.Plan(context.Background(), "q", nil); err == nil {
		t.Error("no candidates: want an error")
	}
}

func TestCompactSchema(t *testing.T) {
	big := `{"type":"object","properties":{"a":{"type":"string","description":"` + strings.Repeat("x", 3000) + `"},"b":{"type":"integer"}},"required":["a"]}`
	got := compactSchema(json.RawMessage(big))
	var m map[string]any
	if err := json.Unmarshal(got, &m); err != nil || len(got) > 200 {
		t.Fatalf("compactSchema = %s (%v)", got, err)
	}
	if !reflect.DeepEqual(m["required"], []any{"a"}) || m["properties"].(map[string]any)["b"].(map[string]any)["type"] != "integer" {
		t.Errorf("summary lost names, types or required: %s", got)
	}
	if s := compactSchema(json.RawMessage("{ \"type\": \"object\" }")); string(s) != `{"type":"object"}` {
		t.Errorf("small schema = %s", s)
	}
	if s := compactSchema(json.RawMessage("not json")); s != nil {
		t.Errorf("invalid schema = %s, want nil", s)
	}
}

func TestConfigFromEnv(t *testing.T) {
	testenv.CheckFromEnv(t, ConfigFromEnv, []testenv.EnvCase[Config]{
		{Name: "off", Want: Config{Temperature: 0.1, Timeout: time.Minute}},
		{Name: "llm", Env: map[string]string{"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_URL": "http://127.0.0.1:11434/v1/chat/completions",
			"TOOL_RAG_PLANNER_MODEL": "qwen", "TOOL_RAG_PLANNER_API_KEY": "k", "TOOL_RAG_PLANNER_TEMPERATURE": "0", "TOOL_RAG_PLANNER_TIMEOUT": "90s"},
			Want: Config{Enabled: true, URL: "http://127.0.0.1:11434/v1/chat/completions", Model: "qwen", APIKey: "k", Temperature: 0, Timeout: 90 * time.Second}},
		{Name: "bad mode", Env: map[string]string{"TOOL_RAG_PLANNER": "on"}, WantErr: "TOOL_RAG_PLANNER="},
		{Name: "no url", Env: map[string]string{"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_MODEL": "m"}, WantErr: "TOOL_RAG_PLANNER_URL"},
		{Name: "no model", Env: map[string]string{"TOOL_RAG_PLANNER": "llm", "TOOL_RAG_PLANNER_URL": "http://x"}, WantErr: "TOOL_RAG_PLANNER_MODEL"},
		{Name: "bad temperature", Env: map[string]string{"TOOL_RAG_PLANNER_TEMPERATURE": "hot"}, WantErr: "TOOL_RAG_PLANNER_TEMPERATURE"},
		{Name: "temperature too high", Env: map[string]string{"TOOL_RAG_PLANNER_TEMPERATURE": "3"}, WantErr: "TOOL_RAG_PLANNER_TEMPERATURE"},
		{Name: "bad timeout", Env: map[string]string{"TOOL_RAG_PLANNER_TIMEOUT": "-1"}, WantErr: "TOOL_RAG_PLANNER_TIMEOUT"},
	})
	if _, err := New(Config{URL: "x", Model: "m"}); err == nil {
		t.Error("New with a bad URL: want an error")
	}
	if _, err := New(Config{URL: "http://x"}); err == nil {
		t.Error("New without a model: want an error")
	}
}
