package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/toolrag/mcp-gateway/lab/rank"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// Task is one agent-mode task: the task as the user states it, the
// capability queries an agent sends to find_tools for it (implied steps
// included), and the tools it needs.
type Task struct {
	ID       string   `json:"id"`
	Task     string   `json:"task"`
	Queries  []string `json:"queries"`
	Relevant []string `json:"relevant"`
	// Groups, when set, are alternatives for each needed tool (group
	// recall counts a group found when any member is returned).
	Groups [][]string `json:"relevant_groups,omitempty"`
	Set    string     `json:"set,omitempty"`
}

// LoadTasks reads a tasks.jsonl file; every relevant id must be a tool of
// ds.
func LoadTasks(path string, ds *Dataset) ([]Task, error) {
	known := map[string]bool{}
	for _, t := range ds.Tools {
		known[t.ID] = true
	}
	var out []Task
	err := readJSONL(path, func(line int, raw []byte) error {
		var t Task
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		if len(t.Queries) == 0 || len(t.Relevant) == 0 {
			return fmt.Errorf("\"queries\" and \"relevant\" are required")
		}
		for _, id := range t.Relevant {
			if !known[id] {
				return fmt.Errorf("relevant tool %q is not in the catalog", id)
			}
		}
		out = append(out, t)
		return nil
	})
	return out, err
}

// SingleTasks turns single-capability queries into one-query tasks (their
// agent query is the query itself).
func SingleTasks(qs []Query) []Task {
	out := make([]Task, len(qs))
	for i, q := range qs {
		out[i] = Task{ID: q.ID, Task: q.Query, Queries: []string{q.Query}, Relevant: q.Relevant, Set: q.Set}
	}
	return out
}

// PhraseTasksAsToolRequests returns tasks with every capability query
// worded as a request for a tool (PhraseAsToolRequest, numbered across
// the tasks); the task text is left as it is.
func PhraseTasksAsToolRequests(tasks []Task) []Task {
	out := make([]Task, len(tasks))
	n := 0
	for i, t := range tasks {
		t.Queries = slices.Clone(t.Queries)
		for j, q := range t.Queries {
			t.Queries[j] = PhraseAsToolRequest(q, n)
			n++
		}
		out[i] = t
	}
	return out
}

// DecomposedTasks makes agent-mode tasks of multi-step queries by
// splitting each at its sentences and steps (retrieve.Decompose): a
// mechanical stand-in for an agent's capability queries, used where no
// hand-written ones exist. A query that does not split is its own query.
func DecomposedTasks(qs []Query) []Task {
	out := make([]Task, len(qs))
	for i, q := range qs {
		parts := retrieve.Decompose(q.Query)
		if len(parts) == 0 {
			parts = []string{q.Query}
		}
		if len(parts) > retrieve.MaxQueries {
			parts = parts[:retrieve.MaxQueries]
		}
		out[i] = Task{ID: q.ID, Task: q.Query, Queries: parts, Relevant: q.Relevant, Groups: q.Groups, Set: q.Set}
	}
	return out
}

// AgentMetrics are task-level recall figures of agent mode.
type AgentMetrics struct {
	Tasks int `json:"tasks"`
	// TaskRecall: the task text as one query, top K.
	TaskRecall float64 `json:"task_recall"`
	// AgentRecall: the union of the top K of each capability query (one
	// grouped find_tools call), as a share of the needed tools.
	AgentRecall float64 `json:"agent_recall"`
	// AgentRelated: the same union plus the related tools of its results.
	AgentRelated float64 `json:"agent_recall_related"`
	// AllFound / AllFoundRelated: share of tasks with every needed tool.
	AllFound        float64 `json:"all_found"`
	AllFoundRelated float64 `json:"all_found_related"`
	// GroupRecall / GroupRelated: agent-mode recall over the tasks'
	// groups (tasks with groups only; GroupTasks of them).
	GroupTasks   int     `json:"group_tasks"`
	GroupRecall  float64 `json:"group_recall"`
	GroupRelated float64 `json:"group_recall_related"`
	// Returned / ReturnedRelated: mean tools handed to the agent.
	Returned        float64 `json:"returned"`
	ReturnedRelated float64 `json:"returned_related"`
}

// Calibration counts results per match level and how many were needed.
type Calibration map[string][2]int // level → {results, relevant}

// AgentReport is one configuration in agent mode.
type AgentReport struct {
	Dataset string
	Config  string
	TopK    int
	AgentMetrics
	BySet map[string]AgentMetrics
	Calib Calibration
}

type agentAcc struct {
	m AgentMetrics
}

func (a *agentAcc) add(task, agent, related float64, all, allRel bool, n, nRel int) {
	a.m.Tasks++
	a.m.TaskRecall += task
	a.m.AgentRecall += agent
	a.m.AgentRelated += related
	if all {
		a.m.AllFound++
	}
	if allRel {
		a.m.AllFoundRelated++
	}
	a.m.Returned += float64(n)
	a.m.ReturnedRelated += float64(nRel)
}

func (a *agentAcc) result() AgentMetrics {
	m := a.m
	if n := float64(m.GroupTasks); n > 0 {
		m.GroupRecall /= n
		m.GroupRelated /= n
	}
	if n := float64(m.Tasks); n > 0 {
		m.TaskRecall /= n
		m.AgentRecall /= n
		m.AgentRelated /= n
		m.AllFound /= n
		m.AllFoundRelated /= n
		m.Returned /= n
		m.ReturnedRelated /= n
	}
	return m
}

// RunAgent evaluates each configuration on tasks over opts.Dataset's
// catalog in agent mode (top opts.TopK per capability query, default 5)
// and prints a table to w.
func RunAgent(ctx context.Context, opts Options, tasks []Task, configs []Config, w io.Writer) ([]AgentReport, error) {
	if opts.TopK <= 0 {
		opts.TopK = 5
	}
	e, err := open(ctx, opts)
	if err != nil {
		return nil, err
	}
	defer e.close()
	var out []AgentReport
	for _, c := range configs {
		rep, err := e.runAgent(ctx, c, tasks)
		if err != nil {
			return out, fmt.Errorf("eval: configuration %q: %w", c.Name, err)
		}
		out = append(out, rep)
	}
	if w != nil {
		PrintAgentReports(w, out)
	}
	return out, nil
}

func (e *env) runAgent(ctx context.Context, c Config, tasks []Task) (AgentReport, error) {
	rep := AgentReport{Dataset: e.ds.Name, Config: c.Name, TopK: e.topK, Calib: Calibration{}}
	fd := e.featureDump(&c)
	s, _, err := e.searcher(ctx, c)
	if err != nil {
		return rep, err
	}
	pol := policy.Unrestricted()
	var acc agentAcc
	bySet := map[string]*agentAcc{}
	for _, t := range tasks {
		rel := map[string]bool{}
		for _, id := range t.Relevant {
			rel[id] = true
		}
		single, err := s.Retrieve(ctx, retrieve.Request{Query: t.Task, TopK: e.topK, Policy: pol})
		if err != nil {
			return rep, fmt.Errorf("task %s: %w", t.ID, err)
		}
		var ranked []string
		for _, r := range single.Results {
			ranked = append(ranked, r.Tool.ID)
		}
		taskRecall := rank.RecallAt(ranked, rel, e.topK)

		groups, err := retrieve.RetrieveGroups(ctx, s, retrieve.Request{TopK: e.topK, Policy: pol}, t.Queries)
		if err != nil {
			return rep, fmt.Errorf("task %s: %w", t.ID, err)
		}
		union, withRel := map[string]bool{}, map[string]bool{}
		for _, g := range groups.Groups {
			for _, r := range g.Results {
				union[r.Tool.ID], withRel[r.Tool.ID] = true, true
				for _, id := range r.Related {
					withRel[id] = true
				}
				if r.Match != "" {
					x := rep.Calib[r.Match]
					x[0]++
					if rel[r.Tool.ID] {
						x[1]++
					}
					rep.Calib[r.Match] = x
				}
			}
		}
		share := func(set map[string]bool) (float64, bool) {
			n := 0
			for id := range rel {
				if set[id] {
					n++
				}
			}
			return float64(n) / float64(len(rel)), n == len(rel)
		}
		if e.perQuery != nil {
			res := AgentTaskResult{Config: c.Name, ID: t.ID, Set: t.Set, Task: t.Task, Relevant: t.Relevant}
			for _, g := range groups.Groups {
				var ids []string
				for _, r := range g.Results {
					ids = append(ids, r.Tool.ID)
				}
				res.Groups = append(res.Groups, AgentGroupResult{Query: g.Query, Ranked: ids})
			}
			if err := e.perQuery.Encode(res); err != nil {
				return rep, fmt.Errorf("eval: writing the per-task results: %w", err)
			}
		}
		if fd != nil {
			// Each capability query again, alone, for its features.
			for i, q := range t.Queries {
				if _, err := s.Retrieve(ctx, retrieve.Request{Query: q, TopK: e.topK, Policy: pol}); err != nil {
					return rep, fmt.Errorf("task %s: %w", t.ID, err)
				}
				if err := fd.write(FeatureRow{Config: c.Name, ID: fmt.Sprintf("%s#%d", t.ID, i), Set: t.Set, Task: t.ID, Relevant: t.Relevant}); err != nil {
					return rep, err
				}
			}
		}
		ar, all := share(union)
		rr, allRel := share(withRel)
		acc.add(taskRecall, ar, rr, all, allRel, len(union), len(withRel))
		if len(t.Groups) > 0 {
			keys := func(m map[string]bool) []string {
				var out []string
				for k := range m {
					out = append(out, k)
				}
				return out
			}
			acc.m.GroupTasks++
			acc.m.GroupRecall += rank.GroupRecallAt(keys(union), t.Groups, len(union))
			acc.m.GroupRelated += rank.GroupRecallAt(keys(withRel), t.Groups, len(withRel))
		}
		if t.Set != "" {
			a := bySet[t.Set]
			if a == nil {
				a = &agentAcc{}
				bySet[t.Set] = a
			}
			a.add(taskRecall, ar, rr, all, allRel, len(union), len(withRel))
		}
	}
	rep.AgentMetrics = acc.result()
	if len(bySet) > 0 {
		rep.BySet = map[string]AgentMetrics{}
		for k, a := range bySet {
			rep.BySet[k] = a.result()
		}
	}
	return rep, nil
}

// AgentTaskResult is one agent-mode task under one configuration, as
// Options.PerQuery writes it: each capability query's ranking.
type AgentTaskResult struct {
	Config   string             `json:"config"`
	ID       string             `json:"id"`
	Set      string             `json:"set,omitempty"`
	Task     string             `json:"task"`
	Relevant []string           `json:"relevant"`
	Groups   []AgentGroupResult `json:"groups"`
}

// AgentGroupResult is one capability query of an AgentTaskResult.
type AgentGroupResult struct {
	Query  string   `json:"query"`
	Ranked []string `json:"ranked"`
}

// PrintAgentReports writes agent-mode reports as a table (per set, then
// all tasks).
func PrintAgentReports(w io.Writer, reps []AgentReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, strings.Join([]string{"dataset", "set", "config", "tasks", "task R@k", "agent R@k", "+related", "agent gR", "+related", "all found", "+related", "returned", "+related", ""}, "\t"))
	row := func(ds, set, cfg string, m AgentMetrics) {
		g, gr := "-", "-"
		if m.GroupTasks > 0 {
			g, gr = f3(m.GroupRecall), f3(m.GroupRelated)
		}
		fmt.Fprintln(tw, strings.Join([]string{ds, set, cfg, fmt.Sprint(m.Tasks), f3(m.TaskRecall), f3(m.AgentRecall), f3(m.AgentRelated), g, gr,
			f3(m.AllFound), f3(m.AllFoundRelated), fmt.Sprintf("%.1f", m.Returned), fmt.Sprintf("%.1f", m.ReturnedRelated), ""}, "\t"))
	}
	for _, r := range reps {
		for _, set := range sortedKeys(r.BySet) {
			row(r.Dataset, set, r.Config, r.BySet[set])
		}
		row(r.Dataset, "all", r.Config, r.AgentMetrics)
	}
	tw.Flush()
	for _, r := range reps {
		if len(r.Calib) == 0 {
			continue
		}
		fmt.Fprintf(w, "match calibration (%s, %s): ", r.Dataset, r.Config)
		for _, lvl := range []string{retrieve.MatchStrong, retrieve.MatchPartial, retrieve.MatchWeak} {
			x := r.Calib[lvl]
			share := 0.0
			if x[0] > 0 {
				share = float64(x[1]) / float64(x[0])
			}
			fmt.Fprintf(w, "%s %d results, %.3f needed; ", lvl, x[0], share)
		}
		fmt.Fprintln(w)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}
