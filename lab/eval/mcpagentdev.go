package eval

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// WriteMCPAgentDev writes the agent-query DEV set into outDir: the tools
// of srcDir (lab/data/mcpagent: tools.jsonl with a "server" per tool)
// as tools.jsonl, and its pairs as queries.jsonl (set "single" for a
// one-tool query, "task" for a multi-tool task). The shipped model never
// saw these pairs (docs/retrieval.md, "Training queries and the model"),
// so for it they are agent-style queries over 46 real MCP servers it was
// not trained on; for a model trained with mcpagent they are not DEV data.
func WriteMCPAgentDev(srcDir, outDir string) error {
	return WriteMCPAgentDevPhrased(srcDir, outDir, nil)
}

// ToolRequestPhrasings are ways agents word a capability query as a
// request for a tool; PhraseAsToolRequest applies them in turn.
var ToolRequestPhrasings = []string{
	"find a tool to %s",
	"a tool that can %s",
	"I need a tool which can %s",
	"is there an API that lets me %s",
	"tool for: %s",
}

// PhraseAsToolRequest words the i-th capability query q as a request for
// a tool (ToolRequestPhrasings[i mod n]).
func PhraseAsToolRequest(q string, i int) string {
	if q != "" {
		q = strings.ToLower(q[:1]) + q[1:]
	}
	return fmt.Sprintf(ToolRequestPhrasings[i%len(ToolRequestPhrasings)], q)
}

// WriteMCPAgentDevPhrased is WriteMCPAgentDev with each single-tool
// query rewritten by phrase (its running number as i; nil: as written).
func WriteMCPAgentDevPhrased(srcDir, outDir string, phrase func(q string, i int) string) error {
	tools, err := createIn(outDir, "tools.jsonl")
	if err != nil {
		return err
	}
	defer tools.Close()
	enc := json.NewEncoder(tools)
	ids := map[string]string{} // mcpagent id -> server__name
	err = readJSONL(filepath.Join(srcDir, "tools.jsonl"), func(line int, raw []byte) error {
		var t toolLine
		if err := json.Unmarshal(raw, &t); err != nil {
			return err
		}
		if t.Server == "" || t.Name == "" {
			return fmt.Errorf("tool %q has no server or name", t.ID)
		}
		ids[t.ID] = t.Server + "__" + t.Name
		out := map[string]any{"server": t.Server, "name": t.Name, "description": t.Description, "input_schema": t.InputSchema}
		if len(t.OutputSchema) > 0 {
			out["output_schema"] = t.OutputSchema
		}
		return enc.Encode(out)
	})
	if err != nil {
		return err
	}
	queries, err := createIn(outDir, "queries.jsonl")
	if err != nil {
		return err
	}
	defer queries.Close()
	qenc := json.NewEncoder(queries)
	n := 0
	err = readJSONL(filepath.Join(srcDir, "pairs.jsonl"), func(line int, raw []byte) error {
		var p struct {
			Query   string   `json:"query"`
			ToolIDs []string `json:"tool_ids"`
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return err
		}
		var rel []string
		for _, id := range p.ToolIDs {
			gid, ok := ids[id]
			if !ok {
				return fmt.Errorf("pair %q names an unknown tool %q", p.Query, id)
			}
			rel = append(rel, gid)
		}
		set, q := "single", strings.TrimSpace(p.Query)
		if len(rel) > 1 {
			set = "task"
		} else if phrase != nil {
			q = phrase(q, n)
		}
		n++
		return qenc.Encode(Query{ID: fmt.Sprintf("ma%04d", n), Query: q, Relevant: rel, Set: set})
	})
	if err != nil {
		return err
	}
	if err := queries.Close(); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return tools.Close()
}
