package eval

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// writeTrainSet writes a small training folder: two datasets, one with a
// grouping field (service) and one without.
func writeTrainSet(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"weather/tools.jsonl": `{"id":"weather__get_forecast","name":"get_forecast","description":"Weather forecast for a city","service":"Open Meteo"}
{"id":"weather__get_alerts","name":"get_alerts","description":"Storm and weather alerts","service":"Open Meteo"}
{"id":"weather__air","name":"air quality","description":"Air pollution index","service":"Air/Now"}
`,
		"weather/pairs.jsonl": `{"query":"will it rain tomorrow in Lisbon","tool_ids":["weather__get_forecast"]}
{"query":"any storm warnings","tool_ids":["weather__get_alerts"]}
{"query":"is the air clean today","tool_ids":["weather__air"]}
{"query":"forecast and alerts for Porto","tool_ids":["weather__get_forecast","weather__get_alerts"]}
`,
		"mail/tools.jsonl": `{"id":"mail__send","name":"send","description":"Send an email"}
{"id":"mail__search","name":"search","description":"Search the mailbox"}
`,
		"mail/pairs.jsonl": `{"query":"email Ana the plan","tool_ids":["mail__send"]}
{"query":"find the invoice mail","tool_ids":["mail__search"]}
`,
		"notes.txt": "not a dataset",
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestFromTrainingSet(t *testing.T) {
	train := writeTrainSet(t)
	tests := []struct {
		name        string
		opts        TrainingSetOptions
		wantQueries map[string]int
	}{
		{"all pairs", TrainingSetOptions{HoldOut: 1}, map[string]int{"weather": 4, "mail": 2}},
		{"capped", TrainingSetOptions{HoldOut: 1, MaxQueries: 1}, map[string]int{"weather": 1, "mail": 1}},
		{"query datasets", TrainingSetOptions{HoldOut: 1, QueryDatasets: []string{"mail"}}, map[string]int{"mail": 2}},
		{"one dataset", TrainingSetOptions{HoldOut: 1, Datasets: []string{"weather"}}, map[string]int{"weather": 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "dev")
			info, err := FromTrainingSet(train, out, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			for ds, n := range tt.wantQueries {
				if info.ByDataset[ds] != n {
					t.Errorf("%s: %d queries, want %d (%v)", ds, info.ByDataset[ds], n, info.ByDataset)
				}
			}
			ds, err := LoadDataset(out)
			if err != nil {
				t.Fatalf("the converted set does not load: %v", err)
			}
			if len(ds.Queries) != info.Queries || len(ds.Tools) != info.Tools {
				t.Errorf("info %+v, loaded %d queries %d tools", info, len(ds.Queries), len(ds.Tools))
			}
			var servers []string
			for _, s := range ds.Servers {
				servers = append(servers, s.ID)
			}
			wantServers := []string{"mail", "weather.Air_Now", "weather.Open_Meteo"}
			if len(tt.opts.Datasets) == 1 {
				wantServers = wantServers[1:]
			}
			if !slices.Equal(servers, wantServers) {
				t.Errorf("servers %v, want %v", servers, wantServers)
			}
			for _, q := range ds.Queries {
				if q.Set == "" || !strings.HasPrefix(q.ID, q.Set+"-") || len(q.Groups) != len(q.Relevant) {
					t.Errorf("query %+v", q)
				}
			}
		})
	}
}

// The default split holds out a share of the labelled tools: only the
// pairs naming a held-out tool become queries, and the same seed gives
// the same split.
func TestFromTrainingSetHoldOut(t *testing.T) {
	train := writeTrainSet(t)
	a, err := FromTrainingSet(train, t.TempDir(), TrainingSetOptions{HoldOut: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	b, err := FromTrainingSet(train, t.TempDir(), TrainingSetOptions{HoldOut: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	if a.Queries == 0 || a.Queries >= 6 || a.Queries != b.Queries {
		t.Errorf("held-out queries %d and %d, want the same number, between 1 and 5", a.Queries, b.Queries)
	}
	if a.Tools != 5 {
		t.Errorf("catalog %d tools, want all 5", a.Tools)
	}
}

func TestFromTrainingSetErrors(t *testing.T) {
	train := writeTrainSet(t)
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "x"), 0o755)
	os.WriteFile(filepath.Join(bad, "x", "tools.jsonl"), []byte(`{"id":"x__a","name":"a"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "x", "pairs.jsonl"), []byte(`{"query":"q","tool_ids":["x__nope"]}`+"\n"), 0o644)
	tests := []struct {
		name, train string
		opts        TrainingSetOptions
		want        string
	}{
		{"hold-out out of range", train, TrainingSetOptions{HoldOut: 2}, "between 0 and 1"},
		{"no such directory", filepath.Join(train, "nope"), TrainingSetOptions{}, "no such file"},
		{"empty directory", t.TempDir(), TrainingSetOptions{}, "no dataset"},
		{"unknown tool in a pair", bad, TrainingSetOptions{}, "x__nope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromTrainingSet(tt.train, t.TempDir(), tt.opts)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want it to mention %q", err, tt.want)
			}
		})
	}
}

// The DEV set runs through the pipeline and reports per-set figures.
func TestDevSetBySet(t *testing.T) {
	out := filepath.Join(t.TempDir(), "dev")
	if _, err := FromTrainingSet(writeTrainSet(t), out, TrainingSetOptions{HoldOut: 1}); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Options{Dataset: out, Config: Config{NoDense: true}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.BySet) != 2 || rep.BySet["weather"].Queries != 4 || rep.Macro == nil || rep.Macro.Queries != 6 {
		t.Fatalf("by set %+v macro %+v", rep.BySet, rep.Macro)
	}
	want := (rep.BySet["weather"].RecallAt5 + rep.BySet["mail"].RecallAt5) / 2
	if !near(rep.Macro.RecallAt5, want) {
		t.Errorf("macro R@5 %v, want the mean of the sets %v", rep.Macro.RecallAt5, want)
	}
}
