package eval

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

var (
	benchSets    = flag.Bool("eval.bench", false, "run the ablation on ../shared/bench/{livemcpbench,stabletoolbench}")
	benchNames   = flag.String("eval.sets", "livemcpbench,stabletoolbench", "comma-separated benchmark folders under ../shared/bench")
	benchConfigs = flag.String("eval.configs", "", "comma-separated configuration names of DefaultAblation (empty: all)")
)

// TestBenchSets prints the ablation table on the shared benchmark sets. It
// only measures (no assertion on the figures): run with
//
//	go test ./pkg/eval -run TestBenchSets -v -timeout 60m -args -eval.bench
func TestBenchSets(t *testing.T) {
	if !*benchSets {
		t.Skip("pass -args -eval.bench to run the benchmark sets")
	}
	shared := testenv.SharedDir(t)
	var configs []Config
	for _, c := range DefaultAblation() {
		if *benchConfigs == "" || slices.Contains(strings.Split(*benchConfigs, ","), c.Name) {
			configs = append(configs, c)
		}
	}
	if len(configs) == 0 {
		t.Fatalf("no configuration named in -eval.configs=%s", *benchConfigs)
	}
	for _, name := range strings.Split(*benchNames, ",") {
		if _, err := Ablation(context.Background(), Options{Dataset: filepath.Join(shared, "bench", name)}, configs, os.Stdout); err != nil {
			t.Fatal(err)
		}
	}
}
