package train

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/internal/testenv"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// TestBenchTrain trains on ../shared/train and measures dense retrieval on
// the held-out split and on both ../shared/bench sets. It runs only with
// TOOLRAG_BENCH=1 (minutes of CPU). TOOLRAG_TRAIN_OPTS may hold Options as
// JSON; TOOLRAG_TRAIN_OUT a folder to write the model to.
func TestBenchTrain(t *testing.T) {
	if os.Getenv("TOOLRAG_BENCH") != "1" {
		t.Skip("set TOOLRAG_BENCH=1 to train and measure on ../shared")
	}
	shared := filepath.Join(testenv.Root(t), "..", "shared")
	opts := Options{TrainDir: filepath.Join(shared, "train")}
	if s := os.Getenv("TOOLRAG_TRAIN_OPTS"); s != "" {
		if err := json.Unmarshal([]byte(s), &opts); err != nil {
			t.Fatal(err)
		}
		opts.TrainDir = filepath.Join(shared, "train")
	}
	opts.OutDir = os.Getenv("TOOLRAG_TRAIN_OUT")
	start := time.Now()
	res, err := Train(context.Background(), opts, testWriter{t})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("trained in %s: vocab %d, best epoch %d, validation %s", time.Since(start).Round(time.Second), res.Vocab, res.BestEpoch, res.Validation)
	benchModel(t, res.Model, shared)
}

// TestBenchModel measures a saved model directory (TOOLRAG_MODEL_DIR).
func TestBenchModel(t *testing.T) {
	dir := os.Getenv("TOOLRAG_MODEL_DIR")
	if os.Getenv("TOOLRAG_BENCH") != "1" || dir == "" {
		t.Skip("set TOOLRAG_BENCH=1 and TOOLRAG_MODEL_DIR to measure a model")
	}
	m, err := model2vec.LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	benchModel(t, m, filepath.Join(testenv.Root(t), "..", "shared"))
}

func benchModel(t *testing.T, m *model2vec.Model, shared string) {
	for _, name := range []string{"livemcpbench", "stabletoolbench"} {
		got, err := EvalDense(context.Background(), m, filepath.Join(shared, "bench", name))
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s dense: %s", name, got)
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(string(p[:len(p)-1]))
	return len(p), nil
}
