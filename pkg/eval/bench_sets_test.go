package eval

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/toolrag/mcp-gateway/internal/testenv"
)

var benchSets = flag.Bool("eval.bench", false, "run the ablation on ../shared/bench/{livemcpbench,stabletoolbench}")

// TestBenchSets prints the ablation table on the shared benchmark sets. It
// only measures (no assertion on the figures): run with
//
//	go test ./pkg/eval -run TestBenchSets -v -args -eval.bench
func TestBenchSets(t *testing.T) {
	if !*benchSets {
		t.Skip("pass -args -eval.bench to run the benchmark sets")
	}
	shared := testenv.SharedDir(t)
	for _, name := range []string{"livemcpbench", "stabletoolbench"} {
		if _, err := Ablation(context.Background(), Options{Dataset: filepath.Join(shared, "bench", name)}, nil, os.Stdout); err != nil {
			t.Fatal(err)
		}
	}
}
