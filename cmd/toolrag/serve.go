package main

import (
	"context"
	"encoding/json"
	"flag"
	"io"

	"github.com/toolrag/mcp-gateway/internal/subcommand"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
	"github.com/toolrag/mcp-gateway/pkg/local"
)

func init() {
	commands.Add("serve", subcommand.Command{
		Summary: "run the gateway (configured by MCP_GATEWAY_* and TOOL_RAG_* variables)",
		Usage:   "toolrag serve",
		About:   serveAbout,
		Flags: func(*flag.FlagSet) subcommand.Run {
			return func(ctx context.Context, stdout, _ io.Writer) error { return serve(ctx, stdout) }
		},
	})
	registerOneShot("sync", "pull tool lists from every upstream into the catalog and rebuild the index, then exit",
		"incremental", "index rebuild mode: full, incremental or off", `
Connects to every upstream of the registry (config/registry.yaml merged over
config/registry.generated.yaml), asks each for its tools, stores them in the SQLite catalog
(TOOL_RAG_DB, default tool_registry.db) and rebuilds the vector index next to it; then exits and
prints the sync report as JSON (servers synced, stale, tools changed, duration in ns). A server
that does not answer keeps its tools, marked stale. A running gateway does this by itself at
start, when the registry changes, and on the console's Sync now; use this command offline.

Example:
  bin/toolrag sync --mode full`,
		func(ctx context.Context, g *local.Runtime, m indexer.Mode) (any, error) { return g.Sync(ctx, m) })
	registerOneShot("reindex", "rebuild the index from the local catalog (no upstream calls)",
		"full", "full or incremental", `
Rebuilds the vector index from the tools stored in the SQLite catalog (TOOL_RAG_DB, default
tool_registry.db) without asking any upstream: after changing TOOL_RAG_EMBEDDER or the model.
It writes the index next to the catalog and prints the build result as JSON. "incremental"
re-embeds only the tools whose text changed.

Example:
  TOOL_RAG_EMBEDDER=builtin bin/toolrag reindex --mode full`,
		func(ctx context.Context, g *local.Runtime, m indexer.Mode) (any, error) { return g.Reindex(ctx, m) })
}

// registerOneShot registers a command that builds the local gateway, runs
// one operation with a --mode flag and prints its result as JSON.
func registerOneShot(name, summary, defMode, modeHelp, about string, op func(context.Context, *local.Runtime, indexer.Mode) (any, error)) {
	commands.Add(name, subcommand.Command{Summary: summary, Usage: "toolrag " + name + " [--mode MODE]", About: about, Flags: func(fs *flag.FlagSet) subcommand.Run {
		mode := fs.String("mode", defMode, modeHelp)
		return func(ctx context.Context, stdout, _ io.Writer) error {
			m, err := indexer.ParseMode(*mode)
			if err != nil {
				return err
			}
			g, err := local.New(ctx, local.Options{})
			if err != nil {
				return err
			}
			defer g.Close()
			res, err := op(ctx, g, m)
			if err != nil {
				return err
			}
			return printJSON(stdout, res)
		}
	}})
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
