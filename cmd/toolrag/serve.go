package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"

	"github.com/toolrag/mcp-gateway/pkg/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

func init() {
	register("serve", "run the gateway (configured by MCP_GATEWAY_* and TOOL_RAG_* variables)", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(stderr)
		if err := fs.Parse(args); err != nil {
			return err
		}
		return local.Run(ctx, local.Options{})
	})
	register("sync", "pull tool lists from every upstream into the catalog and rebuild the index, then exit", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet("sync", flag.ContinueOnError)
		fs.SetOutput(stderr)
		mode := fs.String("mode", "incremental", "index rebuild mode: full, incremental or off")
		if err := fs.Parse(args); err != nil {
			return err
		}
		m, err := indexer.ParseMode(*mode)
		if err != nil {
			return err
		}
		g, err := local.New(ctx, local.Options{})
		if err != nil {
			return err
		}
		defer g.Close()
		rep, err := g.Sync(ctx, m)
		if err != nil {
			return err
		}
		return printJSON(stdout, rep)
	})
	register("reindex", "rebuild the index from the local catalog (no upstream calls)", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		fs := flag.NewFlagSet("reindex", flag.ContinueOnError)
		fs.SetOutput(stderr)
		mode := fs.String("mode", "full", "full or incremental")
		if err := fs.Parse(args); err != nil {
			return err
		}
		m, err := indexer.ParseMode(*mode)
		if err != nil {
			return err
		}
		g, err := local.New(ctx, local.Options{})
		if err != nil {
			return err
		}
		defer g.Close()
		res, err := g.Reindex(ctx, m)
		if err != nil {
			return err
		}
		return printJSON(stdout, res)
	})
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
