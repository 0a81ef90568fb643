package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/eval"
)

func init() {
	register("eval", "measure retrieval quality on a tools.jsonl + queries.jsonl folder (e.g. ../shared/bench/livemcpbench)", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet("eval", flag.ContinueOnError)
		fs.SetOutput(stderr)
		var datasets multiFlag
		fs.Var(&datasets, "dataset", "dataset folder (repeatable)")
		topK := fs.Int("top-k", 10, "results per query")
		source := fs.String("source", "mcp", "how the catalog is loaded: mcp (in-process MCP servers + the gateway's sync) or direct")
		ablation := fs.Bool("ablation", false, "compare BM25F, dense, hybrid and each optional part")
		limit := fs.Int("limit", 0, "evaluate only the first N queries")
		if err := fs.Parse(args); err != nil {
			return err
		}
		if len(datasets) == 0 {
			return errors.New("eval: --dataset is required")
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
			opts := eval.Options{Dataset: ds, TopK: *topK, Source: src, Limit: *limit, Config: eval.Config{Embedder: emb}}
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
	})
}

type multiFlag []string

func (m *multiFlag) String() string     { return fmt.Sprint(*m) }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }
