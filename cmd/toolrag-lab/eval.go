package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/lab/eval"
	"github.com/toolrag/mcp-gateway/pkg/embed"
)

func evalFlags(fs *flag.FlagSet) subcommand.Run {
	var datasets multiFlag
	fs.Var(&datasets, "dataset", "dataset folder (repeatable)")
	topK := fs.Int("top-k", 10, "results per query")
	source := fs.String("source", "mcp", "how the catalog is loaded: mcp (in-process MCP servers + the gateway's sync) or direct")
	ablation := fs.Bool("ablation", false, "compare BM25F, dense, hybrid and each optional part")
	limit := fs.Int("limit", 0, "evaluate only the first N queries")
	return func(ctx context.Context, stdout, stderr io.Writer) error {
		if len(datasets) == 0 {
			return errors.New("eval: --dataset is required: " + datasetHelp)
		}
		for _, ds := range datasets {
			if err := checkDataset(ds); err != nil {
				return err
			}
		}
		var src eval.Source
		switch *source {
		case "mcp":
			src = eval.MCPSource{}
		case "direct":
			src = eval.DirectSource{}
		default:
			return fmt.Errorf("eval: --source must be mcp or direct, not %q", *source)
		}
		// The default configuration is what the gateway runs: the embedder
		// from TOOL_RAG_EMBEDDER (builtin unless set).
		ecfg, err := embed.ConfigFromEnv(os.Getenv)
		if err != nil {
			return err
		}
		emb, err := embed.New(ctx, ecfg)
		if err != nil {
			return err
		}
		for _, ds := range datasets {
			opts := eval.Options{Dataset: ds, TopK: *topK, Source: src, Limit: *limit, Config: eval.Config{Embedder: emb}, Progress: stderr}
			if *ablation {
				configs := eval.DefaultAblation()
				for i := range configs {
					if configs[i].Embedder == nil {
						configs[i].Embedder = emb
					}
				}
				if _, err := eval.Ablation(ctx, opts, configs, stdout); err != nil {
					return err
				}
				continue
			}
			if _, err := eval.Run(ctx, opts, stdout); err != nil {
				return err
			}
		}
		return nil
	}
}

type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// datasetHelp says what an evaluation needs.
const datasetHelp = "a dataset is a folder with tools.jsonl (one tool per line: id, server, name, description, input_schema) " +
	"and queries.jsonl (one query per line: query, relevant: [tool ids]). `make eval` reads the benchmark sets " +
	"../shared/bench/livemcpbench and ../shared/bench/stabletoolbench, next to the repository; put them there, " +
	"or pass --dataset DIR for your own"

// checkDataset reports a missing dataset folder or file plainly, with what
// the evaluation needs, instead of an "open ...: no such file" error.
func checkDataset(dir string) error {
	for _, f := range []string{"tools.jsonl", "queries.jsonl"} {
		p := filepath.Join(dir, f)
		if _, err := os.Stat(p); err != nil {
			if _, derr := os.Stat(dir); derr != nil {
				return fmt.Errorf("eval: dataset %s does not exist; %s", dir, datasetHelp)
			}
			return fmt.Errorf("eval: dataset %s has no %s; %s", dir, f, datasetHelp)
		}
	}
	return nil
}

const evalAbout = `Measures find_tools retrieval quality (recall@k, nDCG, MRR and latency) of
the gateway's retrieval over a benchmark set; --ablation compares BM25F,
dense, hybrid and each optional part.

Reads:  --dataset: folders with tools.jsonl (id, server, name, description,
        input_schema) and queries.jsonl (query, relevant: [tool ids]);
        TOOL_RAG_EMBEDDER picks the embedder (builtin unless set).
Writes: the report table on stdout, progress on stderr.

Example (what make eval runs):
  toolrag-lab eval --dataset ../shared/bench/livemcpbench --dataset ../shared/bench/stabletoolbench`
