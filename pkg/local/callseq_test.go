package local

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// runTools runs each call_name with run_tool in one session.
func runTools(t *testing.T, c *client.Client, names ...string) {
	t.Helper()
	for _, n := range names {
		res, err := testenv.CallTool(c, 30*time.Second, "run_tool", map[string]any{"call_name": n, "arguments": map[string]any{"text": "hi"}})
		if err != nil || res.IsError {
			t.Fatalf("run_tool %s: %v %+v", n, err, res)
		}
	}
}

// relatedOf returns the related call_names find_tools lists under tool.
func relatedOf(t *testing.T, c *client.Client, query, tool string) []string {
	t.Helper()
	res, err := testenv.CallTool(c, 30*time.Second, "find_tools", map[string]any{"query": query, "top_k": 5})
	if err != nil || res.IsError {
		t.Fatalf("find_tools: %v %+v", err, res)
	}
	var found struct {
		Results []struct {
			CallName string   `json:"call_name"`
			Related  []string `json:"related"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(testenv.Text(res)), &found); err != nil {
		t.Fatal(err)
	}
	for _, r := range found.Results {
		if r.CallName == tool {
			return r.Related
		}
	}
	t.Fatalf("find_tools %q: %s not among %+v", query, tool, found.Results)
	return nil
}

func storedSequences(t *testing.T, g *Runtime) map[string]int64 {
	t.Helper()
	cs, err := g.Store.ListCallSequences(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, c := range cs {
		out[c.From+">"+c.To] += c.N
		if c.Day != callseq.Day(time.Now()) {
			t.Errorf("pair %s→%s: day %d, want today (%d)", c.From, c.To, c.Day, callseq.Day(time.Now()))
		}
	}
	return out
}

// TestCallSequencesEndToEnd: with TOOL_RAG_CALL_SEQUENCES on, an agent
// that runs echo then reverse in its session (a legacy session; under
// protocol 2026-07-28, which has none, its key's calls) makes, after a
// sync, find_tools list reverse first under echo's related tools; a key
// that cannot see reverse never sees it there. Only the pair, its count
// and its day are stored.
func TestCallSequencesEndToEnd(t *testing.T) {
	for _, legacy := range []bool{true, false} {
		t.Run(map[bool]string{true: "legacy", false: "2026-07-28"}[legacy], func(t *testing.T) {
			testCallSequences(t, legacy)
		})
	}
}

func testCallSequences(t *testing.T, legacy bool) {
	// One key makes every pair here: no k-anonymity threshold, no cap
	// (TestRedTeam2CallSequenceSteering checks them).
	e := startGateway(t, "", map[string]string{"TOOL_RAG_CALL_SEQUENCES": "1",
		"TOOL_RAG_CALLSEQ_MIN_PRINCIPALS": "1", "TOOL_RAG_CALLSEQ_PRINCIPAL_DAY_CAP": "0"})
	if e.g.App.CallSeq == nil {
		t.Fatal("TOOL_RAG_CALL_SEQUENCES=1 built no recorder")
	}
	ctx := context.Background()
	const query = "return the given text unchanged"
	agent, _ := connect(t, e.url, "k-agent", legacy)
	before := relatedOf(t, agent, query, "echo__echo")
	if slices.Contains(before, "echo__reverse") {
		t.Fatalf("before any call, echo's related %v already list reverse", before)
	}

	runTools(t, agent, "echo__echo", "echo__reverse", "echo__echo", "echo__reverse", "echo__echo", "echo__reverse")
	if legacy {
		other, _ := connect(t, e.url, "k-agent", true) // another session: its first call follows nothing
		runTools(t, other, "echo__reverse")
	}
	if _, err := e.g.Sync(ctx, indexer.ModeIncremental); err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{"echo__echo>echo__reverse": 3, "echo__reverse>echo__echo": 2}
	if got := storedSequences(t, e.g); !mapsEqual(got, want) {
		t.Fatalf("stored counts %v, want %v", got, want)
	}
	if rel := relatedOf(t, agent, query, "echo__echo"); len(rel) == 0 || rel[0] != "echo__reverse" {
		t.Fatalf("after the sync, echo's related %v, want echo__reverse first", rel)
	}

	// The narrow key sees echo and add only.
	narrow, _ := connect(t, e.url, "k-narrow", legacy)
	if rel := relatedOf(t, narrow, query, "echo__echo"); slices.Contains(rel, "echo__reverse") {
		t.Fatalf("the narrow key's related %v list echo__reverse, which it cannot see", rel)
	}

	// Nothing but the pair, its count and its day is stored.
	db, err := sql.Open("sqlite", e.g.Store.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT name FROM pragma_table_info('call_sequences') ORDER BY cid")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var cols []string
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			t.Fatal(err)
		}
		cols = append(cols, c)
	}
	if !slices.Equal(cols, []string{"from_tool", "to_tool", "n", "day"}) {
		t.Fatalf("call_sequences columns %v", cols)
	}
}

// TestCallSequencesOffByDefault: without TOOL_RAG_CALL_SEQUENCES, the same
// calls store nothing.
func TestCallSequencesOffByDefault(t *testing.T) {
	e := startGateway(t, "", nil)
	if e.g.App.CallSeq != nil {
		t.Fatal("a recorder was built with the feature off")
	}
	agent, _ := connect(t, e.url, "k-agent", true)
	runTools(t, agent, "echo__echo", "echo__reverse", "echo__echo", "echo__reverse", "echo__echo", "echo__reverse")
	if _, err := e.g.Sync(context.Background(), indexer.ModeIncremental); err != nil {
		t.Fatal(err)
	}
	if got := storedSequences(t, e.g); len(got) != 0 {
		t.Fatalf("the feature is off, yet %v was stored", got)
	}
	if e.g.App.Retriever.CallSequences() != nil {
		t.Fatal("the retriever was handed call sequences with the feature off")
	}
}

func mapsEqual(a, b map[string]int64) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestRedTeam2CallSequenceSteering (issue 32, finding 6): with
// TOOL_RAG_CALL_SEQUENCES on, one key alternating echo and reverse five
// times changed the admin's related tools, and told every key that sees
// both that someone used them in sequence. Now a pair counts only once 3
// distinct keys made it on one day (TOOL_RAG_CALLSEQ_MIN_PRINCIPALS), and
// one key adds at most 1 to a pair a day
// (TOOL_RAG_CALLSEQ_PRINCIPAL_DAY_CAP).
func TestRedTeam2CallSequenceSteering(t *testing.T) {
	keys := "keys:\n  - id: admin\n    secret: \"k-admin\"\n    admin: true\n    servers: {echo: {}}\n" +
		"  - id: agent\n    secret: \"k-agent\"\n    servers: {echo: {}}\n  - id: third\n    secret: \"k-third\"\n    servers: {echo: {}}\n"
	e := startGatewayWith(t, fmt.Sprintf("servers:\n  echo:\n    transport: stdio\n    command: %q\n", echoServer(t)), keys,
		map[string]string{"TOOL_RAG_CALL_SEQUENCES": "1"})
	ctx := context.Background()
	const query = "return the given text unchanged"
	admin, _ := connect(t, e.url, "k-admin", true)
	before := relatedOf(t, admin, query, "echo__echo")
	attacker, _ := connect(t, e.url, "k-agent", true)
	for range 5 {
		runTools(t, attacker, "echo__echo", "echo__reverse")
	}
	if _, err := e.g.Sync(ctx, indexer.ModeIncremental); err != nil {
		t.Fatal(err)
	}
	if got := storedSequences(t, e.g); len(got) != 0 {
		t.Errorf("one key's alternations were counted: %v", got)
	}
	if after := relatedOf(t, admin, query, "echo__echo"); !slices.Equal(before, after) {
		t.Errorf("one key changed the admin's related tools of echo: %v → %v", before, after)
	}
	// Two more keys make the pair once each: now it counts, the first
	// key's five times as one.
	for _, key := range []string{"k-admin", "k-third"} {
		c, _ := connect(t, e.url, key, true)
		runTools(t, c, "echo__echo", "echo__reverse")
	}
	if _, err := e.g.Sync(ctx, indexer.ModeIncremental); err != nil {
		t.Fatal(err)
	}
	if got, want := storedSequences(t, e.g), map[string]int64{"echo__echo>echo__reverse": 3}; !mapsEqual(got, want) {
		t.Errorf("stored counts after three keys: %v, want %v", got, want)
	}
}
