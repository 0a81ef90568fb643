package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

var outSchemaDev = flag.Bool("eval.outschema", false, "measure Experimental.OutputSchemaText on the DEV sets that have output schemas (see docs/retrieval.md)")

// TestOutputSchemaDev measures whether indexing a tool's outputSchema text
// helps ranking. The real-MCP DEV catalog carries no output schemas (its
// tools come from registry listings with input schemas only), so the
// measurement runs on the agent-query DEV set (lab/data/mcpagent) with the
// real outputSchemas of its filesystem and memory tools
// (lab/data/mcpagent/outputschemas.jsonl, the tools/list of the npm
// servers 2026.8.31), with untrained rankings (BM25F; BM25F + the hashing
// embedder: the builtin model is trained on mcpagent): all queries, and
// the queries whose tools have an output schema.
func TestOutputSchemaDev(t *testing.T) {
	src := filepath.Join("..", "data", "mcpagent")
	outs := map[string]json.RawMessage{}
	if err := readJSONL(filepath.Join(src, "outputschemas.jsonl"), func(_ int, raw []byte) error {
		var l struct {
			ID           string          `json:"id"`
			OutputSchema json.RawMessage `json:"output_schema"`
		}
		if err := json.Unmarshal(raw, &l); err != nil {
			return err
		}
		outs[l.ID] = l.OutputSchema
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(outs) < 20 {
		t.Fatalf("%d output schemas", len(outs))
	}
	// The DEV folder carries them into the catalog records.
	check := t.TempDir()
	if err := copyWithOutputSchemas(src, check, outs, true); err != nil {
		t.Fatal(err)
	}
	conv := filepath.Join(t.TempDir(), "conv")
	if err := WriteMCPAgentDev(check, conv); err != nil {
		t.Fatal(err)
	}
	ds, err := LoadDataset(conv)
	if err != nil {
		t.Fatal(err)
	}
	with := 0
	for _, tl := range ds.Tools {
		if len(tl.Extra) > 0 {
			with++
		}
	}
	if with != len(outs) || len(ds.Queries) == 0 {
		t.Fatalf("%d tools with an output schema, want %d; %d queries", with, len(outs), len(ds.Queries))
	}
	if !*outSchemaDev {
		return
	}
	// The real-MCP DEV catalog has none: nothing to measure there.
	ds, err = LoadDataset(realMCPDir(t))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, tl := range ds.Tools {
		if len(tl.Extra) > 0 {
			n++
		}
	}
	t.Logf("real-MCP DEV: %d of %d tools have an output schema", n, len(ds.Tools))
	for _, subset := range []string{"all", "with-output-schema"} {
		dir := t.TempDir()
		if err := copyWithOutputSchemas(src, dir, outs, subset == "with-output-schema"); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "mcpagent-"+subset)
		if err := WriteMCPAgentDev(dir, out); err != nil {
			t.Fatal(err)
		}
		hashing := embed.NewHashing()
		configs := []Config{
			{Name: "bm25f", NoDense: true},
			{Name: "bm25f+outschema", NoDense: true, Experimental: retrieve.Experimental{OutputSchemaText: true}},
			{Name: "hashing-hybrid", Embedder: hashing},
			{Name: "hashing-hybrid+outschema", Embedder: hashing, Experimental: retrieve.Experimental{OutputSchemaText: true}},
		}
		t.Logf("mcpagent DEV, queries: %s", subset)
		if _, err := Ablation(context.Background(), Options{Dataset: out, TopK: 10}, configs, os.Stdout); err != nil {
			t.Fatal(err)
		}
	}
}

// copyWithOutputSchemas writes src's tools.jsonl with output_schema added
// from outs, and its pairs.jsonl (only those naming a tool of outs when
// only is set).
func copyWithOutputSchemas(src, dst string, outs map[string]json.RawMessage, only bool) error {
	tools, err := os.Create(filepath.Join(dst, "tools.jsonl"))
	if err != nil {
		return err
	}
	defer tools.Close()
	w := bufio.NewWriter(tools)
	if err := readJSONL(filepath.Join(src, "tools.jsonl"), func(_ int, raw []byte) error {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(raw, &m); err != nil {
			return err
		}
		var id string
		_ = json.Unmarshal(m["id"], &id)
		if o, ok := outs[id]; ok {
			m["output_schema"] = o
		}
		b, err := json.Marshal(m)
		if err != nil {
			return err
		}
		_, err = w.Write(append(b, '\n'))
		return err
	}); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	pairs, err := os.Create(filepath.Join(dst, "pairs.jsonl"))
	if err != nil {
		return err
	}
	defer pairs.Close()
	pw := bufio.NewWriter(pairs)
	if err := readJSONL(filepath.Join(src, "pairs.jsonl"), func(_ int, raw []byte) error {
		var p struct {
			ToolIDs []string `json:"tool_ids"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		keep := !only
		for _, id := range p.ToolIDs {
			if _, ok := outs[id]; ok {
				keep = true
			}
		}
		if keep {
			_, err := pw.Write(append([]byte(strings.TrimSpace(string(raw))), '\n'))
			return err
		}
		return nil
	}); err != nil {
		return err
	}
	return pw.Flush()
}
