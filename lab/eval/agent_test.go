package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestRunAgentSynthetic: one capability query per needed tool finds what
// the whole task as one query misses; figures and the calibration table
// are printed for each configuration, including the plain BM25 baseline.
func TestRunAgentSynthetic(t *testing.T) {
	tasks := []Task{
		{ID: "t1", Task: "Email Bob the weather forecast for Lisbon, then put a meeting on the calendar and translate the agenda into French",
			Queries:  []string{"weather forecast", "send an email", "create a calendar event", "translate text"},
			Relevant: []string{"weather__get_forecast", "email__send_email", "calendar__create_event", "translation__translate_text"},
			Groups:   [][]string{{"weather__get_forecast"}, {"email__send_email"}, {"calendar__create_event"}, {"translation__translate_text"}}},
		{ID: "t2", Task: "refund the customer", Queries: []string{"refund a payment"}, Relevant: []string{"payments__refund_payment"}},
	}
	var out bytes.Buffer
	reps, err := RunAgent(context.Background(), Options{Dataset: synthetic, TopK: 2}, tasks,
		[]Config{{Name: "kw", NoDense: true}, {Name: "plain", PlainBM25: true}}, &out)
	if err != nil {
		t.Fatal(err)
	}
	if len(reps) != 2 {
		t.Fatalf("%d reports", len(reps))
	}
	for _, r := range reps {
		if r.Tasks != 2 || r.AgentRecall != 1 || r.AllFound != 1 {
			t.Errorf("%s: %+v, want every needed tool found by the capability queries", r.Config, r.AgentMetrics)
		}
		if r.TaskRecall >= r.AgentRecall {
			t.Errorf("%s: task recall %.3f not below agent recall %.3f at top 2: the case proves nothing", r.Config, r.TaskRecall, r.AgentRecall)
		}
		if r.GroupTasks != 1 || r.GroupRecall != 1 {
			t.Errorf("%s: group recall %.3f over %d tasks, want 1 over 1", r.Config, r.GroupRecall, r.GroupTasks)
		}
		if r.AgentRelated < r.AgentRecall || r.ReturnedRelated < r.Returned {
			t.Errorf("%s: with related %.3f/%.1f below without %.3f/%.1f", r.Config, r.AgentRelated, r.ReturnedRelated, r.AgentRecall, r.Returned)
		}
	}
	if reps[0].Calib["strong"][0] == 0 {
		t.Errorf("kw: no strong match among %v", reps[0].Calib)
	}
	if s := out.String(); !strings.Contains(s, "agent R@k") || !strings.Contains(s, "match calibration") {
		t.Errorf("table:\n%s", s)
	}
}

func TestDecomposedTasks(t *testing.T) {
	ts := DecomposedTasks([]Query{{ID: "a", Query: "Find the weather in Paris. Then email it to Bob.", Relevant: []string{"x"}}, {ID: "b", Query: "weather", Relevant: []string{"y"}}})
	if len(ts[0].Queries) != 2 || len(ts[1].Queries) != 1 || ts[1].Queries[0] != "weather" {
		t.Errorf("DecomposedTasks: %+v", ts)
	}
}

// TestPhraseTasksAsToolRequests: every capability query is worded as a
// request for a tool, in turn; the task text and the input stay as they are.
func TestPhraseTasksAsToolRequests(t *testing.T) {
	in := []Task{{ID: "a", Task: "Do x and y", Queries: []string{"Do x", "do y"}}, {ID: "b", Task: "z", Queries: []string{"z"}}}
	out := PhraseTasksAsToolRequests(in)
	want := [][]string{{PhraseAsToolRequest("Do x", 0), PhraseAsToolRequest("do y", 1)}, {PhraseAsToolRequest("z", 2)}}
	for i := range out {
		if !slices.Equal(out[i].Queries, want[i]) || out[i].Task != in[i].Task {
			t.Errorf("task %d: %+v, want queries %q", i, out[i], want[i])
		}
	}
	if in[0].Queries[0] != "Do x" {
		t.Errorf("the input was changed: %q", in[0].Queries)
	}
	if got := PhraseAsToolRequest("Do x", 0); got != "find a tool to do x" {
		t.Errorf("PhraseAsToolRequest = %q", got)
	}
}

// TestFeatureDump: Options.Features gets one row per query with the
// candidates' features and the relevant tools, in task and agent mode.
func TestFeatureDump(t *testing.T) {
	var buf bytes.Buffer
	if _, err := Ablation(context.Background(), Options{Dataset: synthetic, Limit: 3, Features: &buf}, []Config{{Name: "hybrid"}, {Name: "plain", PlainBM25: true}}, nil); err != nil {
		t.Fatal(err)
	}
	tasks := []Task{{ID: "t1", Task: "email Bob the Lisbon forecast", Queries: []string{"weather forecast", "send an email"},
		Relevant: []string{"weather__get_forecast", "email__send_email"}}}
	if _, err := RunAgent(context.Background(), Options{Dataset: synthetic, TopK: 2, Features: &buf}, tasks, []Config{{Name: "hybrid"}}, nil); err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(&buf)
	var rows []FeatureRow
	for dec.More() {
		var r FeatureRow
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		rows = append(rows, r)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows, want 3 task-mode queries and 2 capability queries (none for plain BM25)", len(rows))
	}
	for i, r := range rows {
		if r.Config != "hybrid" || len(r.Relevant) == 0 || len(r.Cands) == 0 || len(r.Cands) > FeatureRows {
			t.Fatalf("row %d: config %q, %d relevant, %d candidates", i, r.Config, len(r.Relevant), len(r.Cands))
		}
		for j := 1; j < len(r.Cands); j++ {
			if r.Cands[j].Fused > r.Cands[j-1].Fused {
				t.Fatalf("row %d: candidates not best first", i)
			}
		}
	}
	if rows[3].Task != "t1" || rows[3].ID != "t1#0" || rows[4].ID != "t1#1" || rows[0].Task != "" {
		t.Fatalf("agent rows not tied to their task: %+v / %+v", rows[3].ID, rows[4].ID)
	}
	if rows[3].Cands[0].ToolID != "weather__get_forecast" {
		t.Errorf("best candidate for %q is %s", "weather forecast", rows[3].Cands[0].ToolID)
	}
}
