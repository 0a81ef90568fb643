package eval

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"text/tabwriter"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

var callSeqDev = flag.Bool("eval.callseq", false, "measure related with call sequences simulated from the real-MCP DEV tasks (see docs/retrieval.md)")

// simulateSequences turns tasks into call sequences: each task is reps
// sessions that call its needed tools in the listed order. A simulation,
// not observed traffic.
func simulateSequences(tasks []Task, reps int) []callseq.Count {
	var out []callseq.Count
	for _, t := range tasks {
		for i := 1; i < len(t.Relevant); i++ {
			if t.Relevant[i-1] != t.Relevant[i] {
				out = append(out, callseq.Count{From: t.Relevant[i-1], To: t.Relevant[i], N: int64(reps)})
			}
		}
	}
	return out
}

func TestSimulateSequences(t *testing.T) {
	got := simulateSequences([]Task{{Relevant: []string{"a", "b", "c"}}, {Relevant: []string{"x"}}, {Relevant: []string{"a", "b"}}}, 2)
	tab := callseq.NewTable(got, nil)
	if tab.Pairs() != 2 || len(tab.With("b")) != 2 || tab.With("a")[0].N != 4 {
		t.Fatalf("simulated %v: %d pairs, with b %v, with a %v", got, tab.Pairs(), tab.With("b"), tab.With("a"))
	}
}

// TestCallSequencesDev measures, with -eval.callseq, agent-mode recall with
// related on the real-MCP DEV set when the gateway has seen call sequences
// simulated from the DEV multi-tool tasks (each task a session calling its
// needed tools in order): in-sample (the sequences of the very tasks
// measured: workflows that recur) and held out (2-fold by task: the
// sequences of the other half only).
func TestCallSequencesDev(t *testing.T) {
	dir, ds, tasks := realMCPSet(t)
	if !*callSeqDev {
		return
	}
	var singles []Query
	for _, q := range ds.Queries {
		if q.Set == "docker_mcp_registry" {
			singles = append(singles, q)
		}
	}
	ctx := context.Background()
	opts := Options{Dataset: dir, TopK: 5}
	run := func(ts []Task, c Config) AgentMetrics {
		t.Helper()
		reps, err := RunAgent(ctx, opts, ts, []Config{c}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return reps[0].AgentMetrics
	}
	table := func(ts []Task, reps int) *callseq.Table { return callseq.NewTable(simulateSequences(ts, reps), nil) }
	var folds [2][]Task
	for i, tk := range tasks {
		folds[i%2] = append(folds[i%2], tk)
	}
	pairs := func(ts []Task, c Config) [2]int {
		t.Helper()
		got, err := relatedPairRecall(ctx, dir, ts, c)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	type row struct {
		name          string
		multi, multi2 AgentMetrics // the multi-tool tasks; singles
		pair          [2]int       // needed tools listed in a co-needed tool's related; needed tools
	}
	var rows []row
	add := func(name string, seq func(part []Task) *callseq.Table, heldOut bool) {
		var m, s AgentMetrics
		var p [2]int
		if !heldOut {
			c := Config{Name: name}
			if seq != nil {
				c.CallSequences = seq(tasks)
			}
			m, s, p = run(tasks, c), run(SingleTasks(singles), c), pairs(tasks, c)
		} else {
			// Each fold measured with the other fold's sequences.
			ca := Config{Name: name, CallSequences: seq(folds[1])}
			cb := Config{Name: name, CallSequences: seq(folds[0])}
			m = mergeMetrics(run(folds[0], ca), run(folds[1], cb))
			pa, pb := pairs(folds[0], ca), pairs(folds[1], cb)
			p = [2]int{pa[0] + pb[0], pa[1] + pb[1]}
			s = run(SingleTasks(singles), Config{Name: name, CallSequences: seq(tasks)})
		}
		rows = append(rows, row{name, m, s, p})
	}
	// Noise: sessions that call random catalog tools (exploration, other
	// work), 1,000 pairs drawn uniformly (a fixed seed).
	rng := rand.New(rand.NewPCG(17, 3))
	var noise []callseq.Count
	for len(noise) < 1000 {
		a, b := ds.Tools[rng.IntN(len(ds.Tools))].ID, ds.Tools[rng.IntN(len(ds.Tools))].ID
		if a != b {
			noise = append(noise, callseq.Count{From: a, To: b, N: 1})
		}
	}
	add("no sequences (default)", nil, false)
	add("noise only (1,000 random pairs)", func([]Task) *callseq.Table { return callseq.NewTable(noise, nil) }, false)
	for _, reps := range []int{1, 3} {
		add(fmt.Sprintf("in-sample, each task %d session(s)", reps), func(ts []Task) *callseq.Table { return table(ts, reps) }, false)
		add(fmt.Sprintf("held out (2-fold), each task %d session(s)", reps), func(ts []Task) *callseq.Table { return table(ts, reps) }, true)
	}
	add("in-sample, 3 sessions each + noise", func(ts []Task) *callseq.Table {
		return callseq.NewTable(append(simulateSequences(ts, 3), noise...), nil)
	}, false)
	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "sequences\tmulti-tool tasks\tagent R@5\t+related\tall found +related\treturned +related\tsingle queries +related\trelated pair recall\t\n")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.1f\t%.3f\t%.3f (%d/%d)\t\n", r.name, r.multi.Tasks, r.multi.AgentRecall, r.multi.AgentRelated, r.multi.AllFoundRelated,
			r.multi.ReturnedRelated, r.multi2.AgentRelated, float64(r.pair[0])/float64(max(r.pair[1], 1)), r.pair[0], r.pair[1])
	}
	tw.Flush()
}

// mergeMetrics averages two reports' task-level figures by their tasks.
func mergeMetrics(a, b AgentMetrics) AgentMetrics {
	n := float64(a.Tasks + b.Tasks)
	w := func(x, y float64) float64 { return (x*float64(a.Tasks) + y*float64(b.Tasks)) / n }
	return AgentMetrics{Tasks: a.Tasks + b.Tasks, TaskRecall: w(a.TaskRecall, b.TaskRecall), AgentRecall: w(a.AgentRecall, b.AgentRecall),
		AgentRelated: w(a.AgentRelated, b.AgentRelated), AllFound: w(a.AllFound, b.AllFound), AllFoundRelated: w(a.AllFoundRelated, b.AllFoundRelated),
		Returned: w(a.Returned, b.Returned), ReturnedRelated: w(a.ReturnedRelated, b.ReturnedRelated)}
}

// relatedPairRecall counts, over the tasks that need several tools, the
// needed tools that the related list of another needed tool of the same
// task names (the tool's related list is read from the result for its own
// name and description as the query), and the needed tools.
func relatedPairRecall(ctx context.Context, dir string, tasks []Task, c Config) ([2]int, error) {
	e, err := open(ctx, Options{Dataset: dir, TopK: 5})
	if err != nil {
		return [2]int{}, err
	}
	defer e.close()
	s, _, err := e.searcher(ctx, c)
	if err != nil {
		return [2]int{}, err
	}
	byID := map[string]catalog.Tool{}
	for _, tl := range e.ds.Tools {
		byID[tl.ID] = tl
	}
	related := func(id string) ([]string, error) {
		tl := byID[id]
		q := tl.Name + " " + tl.Description
		if len(q) > 400 {
			q = q[:400]
		}
		resp, err := s.Retrieve(ctx, retrieve.Request{Query: q, TopK: 50, Policy: policy.Unrestricted()})
		if err != nil {
			return nil, err
		}
		for _, r := range resp.Results {
			if r.Tool.ID == id {
				return r.Related, nil
			}
		}
		return nil, nil
	}
	var out [2]int
	for _, tk := range tasks {
		need := map[string]bool{}
		for _, id := range tk.Relevant {
			need[id] = true
		}
		if len(need) < 2 {
			continue
		}
		listed := map[string]bool{}
		for id := range need {
			rel, err := related(id)
			if err != nil {
				return out, err
			}
			for _, r := range rel {
				if r != id {
					listed[r] = true
				}
			}
		}
		for id := range need {
			out[1]++
			if listed[id] {
				out[0]++
			}
		}
	}
	return out, nil
}
