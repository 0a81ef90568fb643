package eval

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

var realMCP = flag.Bool("eval.realmcp", false, "run the task-mode ablation and agent mode on the real-MCP DEV set (testdata/realmcp over ../shared/train)")

// AgentConfigs are the configurations compared in agent mode and on the
// real-MCP DEV set (docs/retrieval.md).
func AgentConfigs() []Config {
	return []Config{
		{Name: "plain-bm25", PlainBM25: true},
		{Name: "bm25f", NoDense: true},
		{Name: "bm25f-base", NoDense: true, Experimental: retrieve.Experimental{VerbWeight: -1}},
		{Name: "hybrid"},
		{Name: "hybrid-base", Experimental: retrieve.Experimental{Weights: retrieve.PreviousWeights, VerbWeight: -1}}, // before issue 17
		{Name: "hybrid+compounds", Experimental: retrieve.Experimental{Compounds: true}},
		{Name: "hybrid-noverb", Experimental: retrieve.Experimental{VerbWeight: -1}},
		{Name: "hybrid-verb0.2", Experimental: retrieve.Experimental{VerbWeight: 0.2}},
		{Name: "hybrid-sem0.5", Experimental: retrieve.Experimental{Weights: retrieve.Weights{Semantic: 0.5, Keyword: 1, Metadata: 0.15}}},
		{Name: "hybrid-serverfield1.2", Experimental: retrieve.Experimental{FieldWeights: serverField(1.2)}},
		{Name: "hybrid-noverb-flat", Experimental: retrieve.Experimental{VerbWeight: -1, ServerWeight: -1}},
		{Name: "hybrid-relstruct", Experimental: retrieve.Experimental{RelatedStructureOnly: true}},
		// Issue 17 re-weighing (docs/retrieval.md): the previous default
		// (semantic weight 1.0) and the variants tried against the default.
		{Name: "hybrid-prev", Experimental: retrieve.Experimental{Weights: retrieve.PreviousWeights}},
		{Name: "hybrid-sem0.7-verb0.2", Experimental: retrieve.Experimental{VerbWeight: 0.2}},
		{Name: "hybrid-srvkw", Experimental: retrieve.Experimental{ServerSemantic: -1}},
		{Name: "hybrid-prev+coverage0.5", Experimental: retrieve.Experimental{Weights: retrieve.PreviousWeights, CoverageWeight: 0.5}},
		{Name: "hybrid-prev+semcoverage0.3", Experimental: retrieve.Experimental{Weights: retrieve.PreviousWeights, SemanticCoverage: 0.3}},
		{Name: "hybrid-prev+kwcoverage0.5", Experimental: retrieve.Experimental{Weights: retrieve.PreviousWeights, KeywordCoverage: 0.5}},
	}
}

func serverField(w float64) retrieve.FieldWeights {
	f := retrieve.DefaultFieldWeights
	f[retrieve.FieldServer] = w
	return f
}

func realMCPDir(t *testing.T) string {
	t.Helper()
	train := filepath.Join(testenv.SharedDir(t), "train")
	dir := filepath.Join(t.TempDir(), "realmcp")
	if err := WriteRealMCPDev(train, filepath.Join("testdata", "realmcp"), dir); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestRealMCPDevSet checks the DEV set loads (every relevant tool exists)
// and, with -eval.realmcp, prints the task-mode and agent-mode tables.
func TestRealMCPDevSet(t *testing.T) {
	dir, ds, tasks := realMCPSet(t)
	if len(ds.Tools) != 813 || len(ds.Queries) < 200 || len(tasks) < 40 {
		t.Fatalf("DEV set: %d tools, %d queries, %d tasks", len(ds.Tools), len(ds.Queries), len(tasks))
	}
	if !*realMCP {
		return
	}
	ctx := context.Background()
	configs := selectedAgentConfigs(t)
	pq, fw := perQuery(t), featuresFile(t)
	reps, err := Ablation(ctx, Options{Dataset: dir, TopK: 10, PerQuery: pq, Features: fw}, configs, os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	printBySet(reps)
	var singles []Query
	for _, q := range ds.Queries {
		if q.Set == "docker_mcp_registry" {
			singles = append(singles, q)
		}
	}
	all := append(SingleTasks(singles), tasks...)
	if *realMCPPhrased {
		all = PhraseTasksAsToolRequests(all)
	}
	if _, err := RunAgent(ctx, Options{Dataset: dir, TopK: 5, PerQuery: pq, Features: fw}, all, configs, os.Stdout); err != nil {
		t.Fatal(err)
	}
}

var realMCPPhrased = flag.Bool("eval.realmcp.toolrequest", false, "with -eval.realmcp: word every agent-mode capability query as a request for a tool (PhraseAsToolRequest)")

func selectedAgentConfigs(t *testing.T) []Config {
	saved := *benchConfigs
	defer func() { *benchConfigs = saved }()
	var out []Config
	for _, c := range AgentConfigs() {
		if *benchConfigs == "" || contains(*benchConfigs, c.Name) {
			out = append(out, c)
		}
	}
	if *extraConfigs != "" {
		// Only the -eval.json rows of selectedConfigs.
		*benchConfigs = "\x00"
		out = append(out, selectedConfigs(t)...)
	}
	return out
}

func contains(list, name string) bool {
	return slices.Contains(strings.Split(list, ","), name)
}

var (
	calibDump   = flag.String("eval.calibdump", "", "with -eval.realmcp: write the match signals of every agent-mode result to this JSONL file")
	calibConfig = flag.String("eval.calibconfig", "hybrid", "the AgentConfigs row -eval.calibdump dumps")
)

// TestDumpMatchSignals writes, for the calibration of retrieve.Calibration,
// the signals of the top-5 results of every capability query of the DEV
// set and whether the task needed the tool.
func TestDumpMatchSignals(t *testing.T) {
	if *calibDump == "" {
		t.Skip("set -eval.calibdump")
	}
	dir, ds, tasks := realMCPSet(t)
	var singles []Query
	for _, q := range ds.Queries {
		if q.Set == "docker_mcp_registry" {
			singles = append(singles, q)
		}
	}
	all := append(SingleTasks(singles), tasks...)
	ctx := context.Background()
	e, err := open(ctx, Options{Dataset: dir, TopK: 5})
	if err != nil {
		t.Fatal(err)
	}
	defer e.close()
	i := slices.IndexFunc(AgentConfigs(), func(c Config) bool { return c.Name == *calibConfig })
	if i < 0 {
		t.Fatalf("-eval.calibconfig=%s: no such configuration", *calibConfig)
	}
	s, _, err := e.searcher(ctx, AgentConfigs()[i])
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(*calibDump)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	enc := json.NewEncoder(f)
	for _, tk := range all {
		rel := map[string]bool{}
		for _, id := range tk.Relevant {
			rel[id] = true
		}
		resp, err := retrieve.RetrieveGroups(ctx, s, retrieve.Request{TopK: 5, Policy: policy.Unrestricted()}, tk.Queries)
		if err != nil {
			t.Fatal(err)
		}
		// The same queries for a key that lacks the servers of the needed
		// tools: nothing should look like a match ("negative").
		hidden := map[string]bool{}
		for id := range rel {
			srv, _, _ := strings.Cut(id, "__")
			hidden[srv] = true
		}
		rules := map[string]policy.Rule{}
		for _, sv := range ds.Servers {
			if !hidden[sv.ID] {
				rules[sv.ID] = policy.Rule{}
			}
		}
		neg, err := retrieve.RetrieveGroups(ctx, s, retrieve.Request{TopK: 5, Policy: policy.For(policy.Key{ID: "neg", Servers: rules})}, tk.Queries)
		if err != nil {
			t.Fatal(err)
		}
		for kind, resp := range map[string]retrieve.GroupResponse{"positive": resp, "negative": neg} {
			for _, g := range resp.Groups {
				for rank, r := range g.Results {
					enc.Encode(map[string]any{"kind": kind, "task": tk.ID, "query": g.Query, "rank": rank, "tool": r.Tool.ID, "relevant": rel[r.Tool.ID],
						"coverage": r.Signals.Coverage, "name": r.Signals.NameCoverage, "cosine": r.Signals.Cosine})
				}
			}
		}
	}
}

var benchAgent = flag.Bool("eval.benchagent", false, "run task mode and agent mode (queries split by retrieve.Decompose) on ../shared/bench with AgentConfigs (measurement only)")

// TestBenchAgent prints, for the shared benchmark sets (measurement only,
// nothing is chosen on them), the task-mode table and agent mode with
// each query split into capability queries by retrieve.Decompose (a
// mechanical stand-in for an agent; the sets have no agent queries).
//
//	go test ./lab/eval -run TestBenchAgent -v -timeout 60m -args -eval.benchagent -eval.configs=plain-bm25,bm25f,hybrid
func TestBenchAgent(t *testing.T) {
	if !*benchAgent {
		t.Skip("pass -args -eval.benchagent")
	}
	shared := testenv.SharedDir(t)
	configs := selectedAgentConfigs(t)
	ctx := context.Background()
	for _, name := range strings.Split(*benchNames, ",") {
		dir := filepath.Join(shared, "bench", name)
		if _, err := Ablation(ctx, Options{Dataset: dir}, configs, os.Stdout); err != nil {
			t.Fatal(err)
		}
		ds, err := LoadDataset(dir)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("agent mode, queries split by retrieve.Decompose:")
		if _, err := RunAgent(ctx, Options{Dataset: dir, TopK: 5}, DecomposedTasks(ds.Queries), configs, os.Stdout); err != nil {
			t.Fatal(err)
		}
		if tasks := handWrittenTasks(t, name, ds); tasks != nil {
			fmt.Println("agent mode, hand-written agent queries (testdata/benchagent):")
			if _, err := RunAgent(ctx, Options{Dataset: dir, TopK: 5}, tasks, configs, os.Stdout); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// handWrittenTasks returns the tasks of a benchmark set with the agent
// queries of testdata/benchagent/<set>.json (keyed by the first 8
// characters of the query id), or nil when there are none.
func handWrittenTasks(t *testing.T, set string, ds *Dataset) []Task {
	b, err := os.ReadFile(filepath.Join("testdata", "benchagent", set+".json"))
	if err != nil {
		return nil
	}
	var byID map[string][]string
	if err := json.Unmarshal(b, &byID); err != nil {
		t.Fatal(err)
	}
	var out []Task
	for _, q := range ds.Queries {
		qs := byID[q.ID[:min(8, len(q.ID))]]
		if len(qs) == 0 {
			t.Fatalf("no agent queries for %s", q.ID)
		}
		out = append(out, Task{ID: q.ID, Task: q.Query, Queries: qs, Relevant: q.Relevant, Groups: q.Groups})
	}
	return out
}

var (
	mcpAgentDev     = flag.Bool("eval.mcpagent", false, "run the task-mode ablation on the agent-query DEV set (lab/data/mcpagent; DEV only for a model not trained on it)")
	mcpAgentPhrased = flag.Bool("eval.mcpagent.toolrequest", false, "with -eval.mcpagent: word every single-tool query as a request for a tool (PhraseAsToolRequest)")
	mcpAgentDevDir  = flag.String("eval.mcpagent.dir", filepath.Join("..", "data", "mcpagent"), "the folder (tools.jsonl, pairs.jsonl) -eval.mcpagent reads, e.g. a held-out-by-server part of lab/data/mcpagent")
)

// TestMCPAgentDevSet checks that lab/data/mcpagent converts into a DEV
// set and, with -eval.mcpagent, prints the task-mode table (each query
// is one capability query as an agent sends it to find_tools).
func TestMCPAgentDevSet(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mcpagent")
	var phrase func(string, int) string
	if *mcpAgentPhrased {
		phrase = PhraseAsToolRequest
	}
	if err := WriteMCPAgentDevPhrased(*mcpAgentDevDir, dir, phrase); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Tools) < 800 || len(ds.Servers) < 40 || len(ds.Queries) < 2000 {
		t.Fatalf("mcpagent DEV set: %d tools, %d servers, %d queries", len(ds.Tools), len(ds.Servers), len(ds.Queries))
	}
	if !*mcpAgentDev {
		return
	}
	reps, err := Ablation(context.Background(), Options{Dataset: dir, TopK: 10, PerQuery: perQuery(t), Features: featuresFile(t)}, selectedAgentConfigs(t), os.Stdout)
	if err != nil {
		t.Fatal(err)
	}
	printBySet(reps)
}

// TestWriteMCPAgentDevErrors: a pair naming a tool the folder lacks, or a
// tool without a server, is refused with an error that names it.
func TestWriteMCPAgentDevErrors(t *testing.T) {
	for _, tc := range []struct {
		name, tools, pairs, want string
	}{
		{"unknown tool", `{"id": "m__a__x", "server": "a", "name": "x", "description": "d"}`, `{"query": "q", "tool_ids": ["m__a__y"]}`, `unknown tool "m__a__y"`},
		{"no server", `{"id": "m__x", "name": "x", "description": "d"}`, ``, `tool "m__x" has no server`},
		{"bad json", `{"id": `, ``, `tools.jsonl line 1`},
	} {
		src := t.TempDir()
		if err := os.WriteFile(filepath.Join(src, "tools.jsonl"), []byte(tc.tools+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, "pairs.jsonl"), []byte(tc.pairs+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := WriteMCPAgentDev(src, t.TempDir())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
	// A good folder: a single query and a task, with server__name ids.
	src, out := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(src, "tools.jsonl"), []byte(`{"id": "m__a__x", "server": "a", "name": "x", "description": "d"}
{"id": "m__a__y", "server": "a", "name": "y", "description": "e"}
`), 0o644)
	os.WriteFile(filepath.Join(src, "pairs.jsonl"), []byte(`{"query": " do x ", "tool_ids": ["m__a__x"]}
{"query": "do x then y", "tool_ids": ["m__a__x", "m__a__y"]}
`), 0o644)
	if err := WriteMCPAgentDev(src, out); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadDataset(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds.Queries) != 2 || ds.Queries[0].Query != "do x" || ds.Queries[0].Set != "single" ||
		ds.Queries[1].Set != "task" || !slices.Equal(ds.Queries[1].Relevant, []string{"a__x", "a__y"}) {
		t.Errorf("queries %+v", ds.Queries)
	}
}

// realMCPSet builds the real-MCP DEV set (realMCPDir) and loads its
// queries and multi-tool tasks.
func realMCPSet(t *testing.T) (dir string, ds *Dataset, tasks []Task) {
	t.Helper()
	dir = realMCPDir(t)
	ds, err := LoadDataset(dir)
	if err != nil {
		t.Fatal(err)
	}
	if tasks, err = LoadTasks(filepath.Join(dir, "tasks.jsonl"), ds); err != nil {
		t.Fatal(err)
	}
	return dir, ds, tasks
}
