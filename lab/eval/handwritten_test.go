package eval

import (
	"encoding/json"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// readLines decodes every line of a JSONL file into a T.
func readLines[T any](t *testing.T, path string) []T {
	t.Helper()
	var out []T
	err := readJSONL(path, func(_ int, raw []byte) error {
		var v T
		if err := json.Unmarshal(raw, &v); err != nil {
			return err
		}
		out = append(out, v)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// firstDiff fails the test at the first entry where got and want differ.
func firstDiff[T any](t *testing.T, what string, got, want []T) {
	t.Helper()
	for i := range min(len(got), len(want)) {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s entry %d:\n got %+v\nwant %+v\n(re-run make.py, see the folder's README)", what, i+1, got[i], want[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d entries, the sources give %d (re-run make.py, see the folder's README)", what, len(got), len(want))
	}
}

// TestMCPAgentPairsUpToDate: lab/data/mcpagent/pairs.jsonl holds exactly
// the pairs make.py derives from the queries*.jsonl files there (file by
// file, each tool's queries pass by pass in file order, then the tasks; a
// query written twice with the same labels once), so a query file edited
// without re-running make.py fails here.
func TestMCPAgentPairsUpToDate(t *testing.T) {
	dir := filepath.Join("..", "data", "mcpagent")
	files, err := filepath.Glob(filepath.Join(dir, "queries*.jsonl"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no query files in %s (%v)", dir, err)
	}
	type record struct {
		Server, Tool, Task string
		Passes             map[string][]string // pass ("1".."5"): queries
		Tools              [][2]string
	}
	var want []trainPair
	seen := map[string]bool{}
	add := func(q string, ids ...string) {
		key := strings.Join(strings.Fields(strings.ToLower(q)), " ") + "\x00" + strings.Join(slices.Sorted(slices.Values(ids)), "\x00")
		if !seen[key] {
			seen[key] = true
			want = append(want, trainPair{Query: q, ToolIDs: ids})
		}
	}
	id := func(server, tool string) string { return fmt.Sprintf("mcpagent__%s__%s", server, tool) }
	for _, f := range files {
		var tasks []record
		for _, r := range readLines[record](t, f) {
			switch {
			case r.Tool != "":
				passes := slices.SortedFunc(maps.Keys(r.Passes), func(a, b string) int {
					x, _ := strconv.Atoi(a)
					y, _ := strconv.Atoi(b)
					return x - y
				})
				for _, p := range passes {
					for _, q := range r.Passes[p] {
						add(q, id(r.Server, r.Tool))
					}
				}
			case r.Task != "":
				tasks = append(tasks, r)
			default:
				t.Fatalf("%s: a line with neither a tool nor a task: %+v", f, r)
			}
		}
		for _, r := range tasks {
			var ids []string
			for _, x := range r.Tools {
				ids = append(ids, id(x[0], x[1]))
			}
			add(r.Task, ids...)
		}
	}
	firstDiff(t, "pairs.jsonl", readLines[trainPair](t, filepath.Join(dir, "pairs.jsonl")), want)
}

// TestRealMCPDevUpToDate: the queries.jsonl and tasks.jsonl of
// testdata/realmcp carry the hand-written queries of dev_docker.jsonl
// and dev_agent_tt.jsonl as make.py writes them (the tooltalk and
// taubench task texts themselves come from ../shared/train).
func TestRealMCPDevUpToDate(t *testing.T) {
	dir := filepath.Join("testdata", "realmcp")
	type docker struct {
		Server, Query, Task string
		Queries             []string
		Tools               json.RawMessage
	}
	var wantQueries []Query
	var wantTasks []Task
	var dockerTasks []docker
	for _, d := range readLines[docker](t, filepath.Join(dir, "dev_docker.jsonl")) {
		if d.Task != "" {
			dockerTasks = append(dockerTasks, d)
			continue
		}
		var names []string
		if err := json.Unmarshal(d.Tools, &names); err != nil {
			t.Fatalf("dev_docker.jsonl, query %q: %v", d.Query, err)
		}
		var rel []string
		for _, x := range names {
			rel = append(rel, d.Server+"__"+x)
		}
		wantQueries = append(wantQueries, Query{ID: fmt.Sprintf("dk%03d", len(wantQueries)+1), Query: d.Query, Relevant: rel, Set: "docker_mcp_registry"})
	}
	for i, d := range dockerTasks {
		var tools [][2]string
		if err := json.Unmarshal(d.Tools, &tools); err != nil {
			t.Fatalf("dev_docker.jsonl, task %q: %v", d.Task, err)
		}
		var rel []string
		for _, x := range tools {
			rel = append(rel, x[0]+"__"+x[1])
		}
		qid := fmt.Sprintf("dkt%02d", i+1)
		wantQueries = append(wantQueries, Query{ID: qid, Query: d.Task, Relevant: rel, Set: "docker_tasks"})
		wantTasks = append(wantTasks, Task{ID: qid, Task: d.Task, Queries: d.Queries, Relevant: rel, Set: "docker_tasks"})
	}
	var gotQueries []Query
	for _, q := range readLines[Query](t, filepath.Join(dir, "queries.jsonl")) {
		if strings.HasPrefix(q.Set, "docker_") {
			gotQueries = append(gotQueries, q)
		}
	}
	firstDiff(t, "queries.jsonl (docker)", gotQueries, wantQueries)

	type agent struct {
		Set, Prefix string
		Queries     []string
	}
	agents := readLines[agent](t, filepath.Join(dir, "dev_agent_tt.jsonl"))
	used := map[string]bool{}
	var gotTasks []Task
	for _, task := range readLines[Task](t, filepath.Join(dir, "tasks.jsonl")) {
		if task.Set == "docker_tasks" {
			gotTasks = append(gotTasks, task)
			continue
		}
		// tooltalk: the first prefix the task starts with (spaces around it
		// trimmed); taubench: the longest.
		var best *agent
		for i, a := range agents {
			p := a.Prefix
			if a.Set == "tooltalk" {
				p = strings.TrimSpace(p)
			}
			if a.Set != task.Set || !strings.HasPrefix(task.Task, p) {
				continue
			}
			if best == nil || a.Set == "taubench" && len(a.Prefix) > len(best.Prefix) {
				best = &agents[i]
			}
		}
		if best == nil || !slices.Equal(task.Queries, best.Queries) {
			t.Fatalf("tasks.jsonl, task %s: queries %q, dev_agent_tt.jsonl gives %+v (re-run make.py)", task.ID, task.Queries, best)
		}
		used[best.Set+best.Prefix] = true
	}
	firstDiff(t, "tasks.jsonl (docker)", gotTasks, wantTasks)
	for _, a := range agents {
		if !used[a.Set+a.Prefix] {
			t.Errorf("dev_agent_tt.jsonl: no task in tasks.jsonl for %s %q (re-run make.py)", a.Set, a.Prefix)
		}
	}
}
