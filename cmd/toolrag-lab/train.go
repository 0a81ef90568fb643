package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/lab/train"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

func trainFlags(fs *flag.FlagSet) subcommand.Run {
	var o train.Options
	fs.StringVar(&o.TrainDir, "data", "../shared/train", "folder of datasets (each with tools.jsonl and pairs.jsonl)")
	fs.StringVar(&o.OutDir, "out", "pkg/embed/toolmodel/model", "where to write the Model2Vec model directory")
	fs.StringVar(&o.BaseTokenizer, "tokenizer", "", "BERT-style tokenizer.json to prune (default: the all-MiniLM-L6-v2 vocabulary from the Go module proxy)")
	fs.IntVar(&o.Dim, "dim", 0, "embedding dimension (default 512)")
	fs.IntVar(&o.Epochs, "epochs", 0, "training epochs (default 8)")
	seed := fs.Uint64("seed", 1, "random seed (same seed, same model)")
	fs.IntVar(&o.Threads, "threads", 0, "worker goroutines (default GOMAXPROCS)")
	fs.Float64Var(&o.HashWeight, "hash-weight", 0, "weight of the hashing features the model is trained next to and served with (default 0.5, as the builtin embedder; negative: the model alone)")
	fs.StringVar(&o.WordNetDir, "wordnet", "", "WordNet 3.0 database folder for extra word-relation pairs (e.g. /usr/share/wordnet)")
	fs.IntVar(&o.WordTokens, "word-tokens", 0, "add the training text's words used at least this often that the base vocabulary splits into pieces as whole tokens (default 0: none)")
	fs.StringVar(&o.Teacher, "teacher", "", "a sentence encoder's vectors of the training text (JSON lines, as `make distilled` makes them): soft targets mixed into the loss")
	fs.Float64Var(&o.TeacherWeight, "teacher-weight", 0, "share of the teacher's soft target (default 0.3)")
	fs.Float64Var(&o.TeacherTemperature, "teacher-temperature", 0, "temperature of the teacher's softmax (default 0.05)")
	dtype := fs.String("dtype", "i8", "stored table type: f32, f16 or i8")
	exclude := fs.String("exclude", strings.Join(train.DevDatasets, ","), "comma-separated dataset folders to leave out (default: the real-MCP DEV datasets; \"\" for none)")
	var extra []string
	fs.Func("add", "another dataset folder to train on (tools.jsonl + pairs.jsonl, named by its base name; repeatable), e.g. lab/data/mcpagent", func(s string) error {
		extra = append(extra, s)
		return nil
	})
	weights := fs.String("weight", "", "dataset weights as name=w,... over the defaults (clinc150=0.5,hwu64=0.5); w > 1 repeats the dataset's examples")
	fs.IntVar(&o.ServerNegatives, "server-negatives", 0, "hard-negative places reserved for tools of the positive's own server (default 10; negative: none)")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if o.TrainDir == "" {
			return errors.New("train: --data is required")
		}
		o.Seed = *seed
		switch strings.ToLower(*dtype) {
		case "f32":
			o.DType = model2vec.F32
		case "f16":
			o.DType = model2vec.F16
		case "i8":
			o.DType = model2vec.I8
		default:
			return errors.New("train: --dtype must be f32, f16 or i8")
		}
		if *exclude != "" {
			o.Exclude = strings.Split(*exclude, ",")
		}
		o.Extra = extra
		if *weights != "" {
			w, err := parseWeights(*weights)
			if err != nil {
				return err
			}
			o.DatasetWeight = w
		}
		return train.Run(ctx, o, stderr)
	}
}

// parseWeights reads "name=w,name=w" over train.DefaultDatasetWeights.
func parseWeights(s string) (map[string]float64, error) {
	out := train.DefaultDatasetWeights()
	for _, kv := range strings.Split(s, ",") {
		name, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		w, err := strconv.ParseFloat(v, 64)
		if !ok || name == "" || err != nil || w <= 0 {
			return nil, fmt.Errorf("train: --weight %q: want name=w with w > 0", kv)
		}
		out[name] = w
	}
	return out, nil
}

const trainAbout = `Trains the builtin embedding model (a Model2Vec static table) contrastively
on (query, tool) pairs, validates it on held-out tools and writes it.

Reads:  --data: dataset folders, each with tools.jsonl and pairs.jsonl
        (../shared/train); --add: more such folders (lab/data/mcpagent);
        the base tokenizer from the Go module proxy unless --tokenizer.
Writes: --out: the model directory (model.safetensors, tokenizer.json,
        config.json; default pkg/embed/toolmodel/model, the one the gateway embeds);
        progress and validation figures on stderr.

Example (what make model runs):
  toolrag-lab train --data ../shared/train --exclude docker_mcp_registry,taubench,tooltalk --add lab/data/mcpagent --out pkg/embed/toolmodel/model`
