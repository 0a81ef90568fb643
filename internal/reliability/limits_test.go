package reliability

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

// TestAuthFailuresCounted: every rejected request is counted in
// auth_failures_total, in both metric formats.
func TestAuthFailuresCounted(t *testing.T) {
	m := matrixGateway(t)
	before, _ := m.g.metrics(t, "sekret-admin-a1b2")
	bad := []map[string]string{
		{"Authorization": "Bearer sekret-wrong-0000"},
		{"Authorization": "Bearer sekret-revoked-e5f6"},
		{"Authorization": "Basic sekret-admin-a1b2"},
		{"Authorization": "Bearer "},
		{},
	}
	for _, h := range bad {
		for _, path := range []string{"/mcp", "/tool-rag/retrieve"} {
			code, _, body := httpDo(t, nil, "POST", m.g.base+path, "", `{"query":"x"}`, h)
			if code != 401 {
				t.Errorf("%s with %v: %d %s", path, h, code, body)
			}
		}
	}
	after, _ := m.g.metrics(t, "sekret-admin-a1b2")
	if d := after["auth_failures_total"].(float64) - before["auth_failures_total"].(float64); d != float64(2*len(bad)) {
		t.Errorf("auth_failures_total grew by %v, want %d", d, 2*len(bad))
	}
	code, _, prom := httpDo(t, nil, "GET", m.g.base+"/tool-rag/metrics", "sekret-admin-a1b2", "", map[string]string{"Accept": "text/plain"})
	if code != 200 || !strings.Contains(prom, fmt.Sprintf("auth_failures_total %d", int(after["auth_failures_total"].(float64)))) {
		t.Errorf("prometheus auth_failures_total: %d %s", code, prom)
	}
}

// TestRateLimit: a key over its rate_limit gets 429 with Retry-After, on
// both endpoints; other keys are not affected; rejections are counted.
func TestRateLimit(t *testing.T) {
	m := matrixGateway(t)
	before, _ := m.g.metrics(t, "sekret-admin-a1b2")
	retrieve := func(key string) (int, http.Header, string) {
		return httpDo(t, nil, "POST", m.g.base+"/tool-rag/retrieve", key, `{"query":"echo"}`, nil)
	}
	// rate 0.01/s, burst 2: two requests pass, the next waits ~100s.
	for i := 0; i < 2; i++ {
		if code, _, body := retrieve("sekret-limited-1357"); code != 200 {
			t.Fatalf("request %d within the burst: %d %s", i+1, code, body)
		}
	}
	for _, path := range []string{"/tool-rag/retrieve", "/mcp"} {
		code, hdr, body := httpDo(t, nil, "POST", m.g.base+path, "sekret-limited-1357", `{"query":"echo"}`, nil)
		if code != http.StatusTooManyRequests {
			t.Fatalf("%s over the limit: %d %s", path, code, body)
		}
		ra, err := strconv.Atoi(hdr.Get("Retry-After"))
		if err != nil || ra < 1 || ra > 101 {
			t.Errorf("Retry-After %q, want the seconds until the next token (~100)", hdr.Get("Retry-After"))
		}
		if !strings.Contains(body, "rate limit exceeded") || !strings.Contains(body, `key \"limited\"`) || !strings.Contains(body, "burst 2") {
			t.Errorf("429 body does not name the limit: %q", body)
		}
		if strings.Contains(body, "sekret") {
			t.Errorf("429 body leaks the secret: %q", body)
		}
	}
	if code, _, body := retrieve("sekret-full-9f8e"); code != 200 {
		t.Errorf("another key is throttled too: %d %s", code, body)
	}
	after, _ := m.g.metrics(t, "sekret-admin-a1b2")
	if d := after["auth_rate_limited_total"].(float64) - before["auth_rate_limited_total"].(float64); d != 2 {
		t.Errorf("auth_rate_limited_total grew by %v, want 2", d)
	}
}

// TestRequestLimits: each limit rejects with an answer that names it.
func TestRequestLimits(t *testing.T) {
	m := matrixGateway(t)
	const key = "sekret-admin-a1b2"
	c := connect(t, m.g.url, key, false, nil)
	before, _ := m.g.metrics(t, key)
	mcpHdr := map[string]string{"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}

	t.Run("MCP body size", func(t *testing.T) {
		body := mcpBody("ping", `{"pad":"`+strings.Repeat("a", 70000)+`"}`)
		code, _, out := httpDo(t, nil, "POST", m.g.url, key, body, mcpHdr)
		if code != 413 || !strings.Contains(out, "limit of 65536 bytes") || !strings.Contains(out, "MCP_GATEWAY_MAX_BODY_BYTES") {
			t.Errorf("%d %s", code, out)
		}
	})
	t.Run("REST body size", func(t *testing.T) {
		body := `{"query":"` + strings.Repeat("a", 1<<20) + `"}`
		code, _, out := httpDo(t, nil, "POST", m.g.base+"/tool-rag/retrieve", key, body, nil)
		// The REST API takes the same configurable limit as /mcp.
		if code != 413 || !strings.Contains(out, "limit of 65536 bytes") || !strings.Contains(out, "MCP_GATEWAY_MAX_BODY_BYTES") {
			t.Errorf("%d %s", code, out)
		}
	})
	t.Run("JSON depth", func(t *testing.T) {
		body := mcpBody("ping", strings.Repeat(`{"a":`, 99)+"1"+strings.Repeat("}", 99))
		code, _, out := httpDo(t, nil, "POST", m.g.url, key, body, mcpHdr)
		if code != 400 || !strings.Contains(out, "nested 100 levels deep; the limit is 64") {
			t.Errorf("%d %s", code, out)
		}
	})
	t.Run("run_tools batch size", func(t *testing.T) {
		var calls []any
		for i := 0; i < 33; i++ {
			calls = append(calls, map[string]any{"call_name": "echo__echo", "arguments": map[string]any{"text": "x"}})
		}
		res, err := testenv.CallTool(c, 30*time.Second, "run_tools", map[string]any{"calls": calls})
		if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "33 exceeds the run_tools batch limit of 32") {
			t.Errorf("%v %q", err, testenv.Text(res))
		}
		res, err = testenv.CallTool(c, 30*time.Second, "run_tools", map[string]any{"calls": calls[:32]})
		if err != nil || res.IsError || parseBatch(t, res).Succeeded != 32 {
			t.Errorf("a batch of exactly 32: %v %q", err, testenv.Text(res))
		}
	})
	t.Run("query length", func(t *testing.T) {
		long := strings.Repeat("é", 2001)
		res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": long})
		if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "query is 2001 characters; the limit is 2000") {
			t.Errorf("find_tools: %v %q", err, testenv.Text(res))
		}
		code, _, out := httpDo(t, nil, "POST", m.g.base+"/tool-rag/retrieve", key, `{"query":"`+long+`"}`, nil)
		if code != 400 || !strings.Contains(out, "is 2001 characters; the limit is 2000") {
			t.Errorf("retrieve: %d %s", code, out)
		}
		if res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": long[:2000*2]}); err != nil || res.IsError {
			t.Errorf("a query of exactly 2000 characters: %v %q", err, testenv.Text(res))
		}
	})
	t.Run("top_k", func(t *testing.T) {
		for _, k := range []int{0, 51} {
			res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": "echo", "top_k": k})
			if err != nil || !res.IsError || !strings.Contains(testenv.Text(res), "top_k must be between 1 and 50") {
				t.Errorf("find_tools top_k %d: %v %q", k, err, testenv.Text(res))
			}
			code, _, out := httpDo(t, nil, "POST", m.g.base+"/tool-rag/retrieve", key, fmt.Sprintf(`{"query":"echo","top_k":%d}`, k), nil)
			if code != 400 || !strings.Contains(out, `\"top_k\" must be between 1 and 50`) {
				t.Errorf("retrieve top_k %d: %d %s", k, code, out)
			}
		}
	})
	after, _ := m.g.metrics(t, key)
	if d := after["http_rejected_total"].(float64) - before["http_rejected_total"].(float64); d != 2 {
		t.Errorf("http_rejected_total grew by %v, want 2 (MCP body size and depth)", d)
	}
}

// greedyPlanner is a chat-completions endpoint (OpenAI wire format) whose
// "model" proposes one step for every tool of the matrix catalog, granted
// or not, plus a tool that does not exist.
func greedyPlanner(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var steps []map[string]any
		for i, id := range append(append([]string{}, allTools...), missingTool) {
			steps = append(steps, map[string]any{"id": fmt.Sprintf("s%d", i), "call_name": id, "depends_on": []string{}, "group": 1})
		}
		plan, _ := json.Marshal(map[string]any{"steps": steps, "notes": "all of them"})
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": string(plan)}}}})
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1/chat/completions"
}
