package gateway_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/gateway"
)

// TestFindToolsQueries: find_tools with queries answers one group per
// query (top_k each, no tool twice), shares one max_tokens budget, and
// registers every returned tool for a strict (legacy) client.
func TestFindToolsQueries(t *testing.T) {
	h := newTestGateway(t, upstreamServer(), 5*time.Second, gateway.HTTPOptions{}, nil)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	agent := connect(t, srv.URL+"/mcp", "fz-agent-secret")

	type found struct {
		CallName string   `json:"call_name"`
		Match    string   `json:"match"`
		Related  []string `json:"related"`
	}
	type answer struct {
		Groups []struct {
			Query   string  `json:"query"`
			Results []found `json:"results"`
			Hint    string  `json:"hint"`
		} `json:"groups"`
	}
	decode := func(res *mcp.CallToolResult) answer {
		t.Helper()
		if res.IsError {
			t.Fatalf("find_tools error: %+v", res.Content)
		}
		var a answer
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatal(err)
		}
		return a
	}

	a := decode(agent.call(t, "find_tools", map[string]any{"queries": []any{"add two numbers", "echo text back", "add numbers"}, "top_k": 1}))
	if len(a.Groups) != 3 {
		t.Fatalf("%d groups, want 3: %+v", len(a.Groups), a)
	}
	want := []string{"alpha__add", "alpha__echo"}
	seen := map[string]bool{}
	for i, g := range a.Groups {
		if len(g.Results) > 1 {
			t.Errorf("group %d has %d results, top_k is 1", i, len(g.Results))
		}
		for _, r := range g.Results {
			if seen[r.CallName] {
				t.Errorf("%s listed twice", r.CallName)
			}
			seen[r.CallName] = true
			if strings.HasPrefix(r.CallName, "beta__") {
				t.Errorf("ungranted tool %s found", r.CallName)
			}
		}
		if i < 2 && (len(g.Results) != 1 || g.Results[0].CallName != want[i]) {
			t.Errorf("group %d (%q): %+v, want %s", i, g.Query, g.Results, want[i])
		}
		if i < 2 && g.Results[0].Match == "" {
			t.Errorf("group %d: no match level", i)
		}
	}

	// Strict client: every returned tool is registered.
	list, err := agent.c.ListTools(t.Context(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tl := range list.Tools {
		names[tl.Name] = true
		if tl.Name == "find_tools" {
			schema, _ := json.Marshal(tl)
			if !strings.Contains(tl.Description, "one capability per query") || !strings.Contains(string(schema), `"queries"`) {
				t.Errorf("find_tools does not tell the agent about queries: %q %s", tl.Description, schema)
			}
		}
	}
	for name := range seen {
		if !names[name] {
			t.Errorf("tools/list after find_tools lacks %s: %v", name, names)
		}
	}

	// One budget for all groups: a tiny one holds fewer tools than the
	// groups would otherwise return.
	small := decode(agent.call(t, "find_tools", map[string]any{"queries": []any{"add two numbers", "echo text back"}, "max_tokens": 60}))
	n := 0
	for _, g := range small.Groups {
		n += len(g.Results)
	}
	if n != 1 {
		t.Errorf("max_tokens 60 across two groups returned %d tools, want 1: %+v", n, small)
	}

	// Nothing matches: every result weak, with a hint.
	none := decode(agent.call(t, "find_tools", map[string]any{"queries": []any{"book a flight to Lisbon"}}))
	if h := none.Groups[0].Hint; !strings.Contains(h, "no tool matches") {
		t.Errorf("no-match query: hint %q", h)
	}

	// query and queries together: query first, duplicates asked once.
	both := decode(agent.call(t, "find_tools", map[string]any{"query": "add two numbers", "queries": []any{"Add  two numbers", "echo text back"}, "top_k": 1}))
	if len(both.Groups) != 2 || both.Groups[0].Query != "add two numbers" || both.Groups[1].Query != "echo text back" {
		t.Errorf("query + queries: %+v, want two groups, query first", both.Groups)
	}

	// Bad input gets a clear error.
	for _, args := range []map[string]any{
		{},
		{"queries": []any{}},
		{"queries": "add"},
		{"queries": []any{"a", ""}},
		{"queries": []any{"1", "2", "3", "4", "5", "6", "7", "8", "9"}},
	} {
		res := agent.call(t, "find_tools", args)
		if !res.IsError {
			t.Errorf("find_tools %v: no error", args)
		}
	}
}
