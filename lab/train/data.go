package train

import (
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/lab/jsonl"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

// Tool is one tool of a training catalog.
type Tool struct {
	ID          string
	Dataset     string
	Name        string
	Description string
	InputSchema json.RawMessage
	// Server is the MCP server the tool belongs to, when the dataset says
	// (tools.jsonl "server"); it becomes the document's "server:" line, as
	// in the gateway's index.
	Server string
	// Text, when set, is the whole document (auxiliary pseudo-tools such
	// as WordNet entries).
	Text string
}

// Pair is one training query and the tools that answer it.
type Pair struct {
	Dataset string
	Query   string
	ToolIDs []string
}

// Corpus is the training data: every tool catalog and query set found under
// a directory (one sub-directory per dataset with tools.jsonl and
// pairs.jsonl).
type Corpus struct {
	Datasets []string // sorted
	Tools    []Tool   // sorted by ID
	Pairs    []Pair   // in file order, datasets sorted
	byID     map[string]int
}

type toolLine struct {
	ID          string          `json:"id"`
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type pairLine struct {
	Query   string   `json:"query"`
	ToolIDs []string `json:"tool_ids"`
}

// LoadCorpus reads every dataset under dir, then the dataset folders in
// extra (each a folder with tools.jsonl and pairs.jsonl, named by its base
// name, such as lab/data/mcpagent). Datasets named in exclude are skipped
// (extra folders too). A pair naming an unknown tool, an extra folder
// without tools.jsonl and two datasets of the same name are errors.
func LoadCorpus(dir string, exclude []string, extra ...string) (*Corpus, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("training data: %w", err)
	}
	skip := map[string]bool{}
	for _, e := range exclude {
		skip[e] = true
	}
	c := &Corpus{byID: map[string]int{}}
	folder := map[string]string{} // dataset name → folder
	for _, e := range entries {
		if !e.IsDir() || skip[e.Name()] {
			continue
		}
		sub := filepath.Join(dir, e.Name())
		if _, err := os.Stat(filepath.Join(sub, "tools.jsonl")); err != nil {
			continue
		}
		c.Datasets = append(c.Datasets, e.Name())
		folder[e.Name()] = sub
	}
	for _, sub := range extra {
		name := filepath.Base(filepath.Clean(sub))
		if skip[name] {
			continue
		}
		if _, err := os.Stat(filepath.Join(sub, "tools.jsonl")); err != nil {
			return nil, fmt.Errorf("training data: extra dataset %s: %w", sub, err)
		}
		if prev, dup := folder[name]; dup {
			return nil, fmt.Errorf("training data: two datasets named %q (%s and %s)", name, prev, sub)
		}
		c.Datasets = append(c.Datasets, name)
		folder[name] = sub
	}
	sort.Strings(c.Datasets)
	if len(c.Datasets) == 0 {
		return nil, fmt.Errorf("training data: no dataset folders with tools.jsonl under %s", dir)
	}
	for _, ds := range c.Datasets {
		sub := folder[ds]
		err := jsonl.ReadFile(filepath.Join(sub, "tools.jsonl"), func(_ int, raw []byte) error {
			var tl toolLine
			if err := json.Unmarshal(raw, &tl); err != nil {
				return err
			}
			if tl.ID == "" || tl.Name == "" {
				return errors.New(`"id" and "name" are required`)
			}
			if _, dup := c.byID[tl.ID]; dup {
				return fmt.Errorf("duplicate tool id %q", tl.ID)
			}
			if string(tl.InputSchema) == "null" {
				tl.InputSchema = nil
			}
			c.byID[tl.ID] = len(c.Tools)
			c.Tools = append(c.Tools, Tool{ID: tl.ID, Dataset: ds, Name: tl.Name, Description: tl.Description, InputSchema: tl.InputSchema, Server: tl.Server})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("training data: %w", err)
		}
		pp := filepath.Join(sub, "pairs.jsonl")
		if _, err := os.Stat(pp); err != nil {
			continue
		}
		err = jsonl.ReadFile(pp, func(_ int, raw []byte) error {
			var pl pairLine
			if err := json.Unmarshal(raw, &pl); err != nil {
				return err
			}
			if strings.TrimSpace(pl.Query) == "" || len(pl.ToolIDs) == 0 {
				return errors.New(`"query" and "tool_ids" are required`)
			}
			for _, id := range pl.ToolIDs {
				if _, ok := c.byID[id]; !ok {
					return fmt.Errorf("tool %q is not in tools.jsonl", id)
				}
			}
			c.Pairs = append(c.Pairs, Pair{Dataset: ds, Query: pl.Query, ToolIDs: pl.ToolIDs})
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("training data: %w", err)
		}
	}
	sort.Slice(c.Tools, func(i, j int) bool { return c.Tools[i].ID < c.Tools[j].ID })
	for i, t := range c.Tools {
		c.byID[t.ID] = i
	}
	return c, nil
}

// Document is the text a training tool is embedded as: the gateway's own
// enrichment (indexer.Document) of a tool without a server record (but
// with its server's name when the dataset gives one), so that training
// sees the same layout as the index.
func (t Tool) Document() string {
	if t.Text != "" {
		return t.Text
	}
	ct := catalog.Tool{Name: t.Name, Description: t.Description, InputSchema: t.InputSchema, Server: t.Server}
	catalog.Finalize(&ct)
	return indexer.Document(ct, catalog.Server{})
}

// split assigns tools to the validation set: a share holdOut of the tools
// that have pairs, per dataset, chosen by a seeded hash of the tool id.
// Pairs naming a held-out tool are validation pairs.
func (c *Corpus) split(holdOut float64, seed uint64) (trainPairs, valPairs []Pair, heldOut map[string]bool) {
	heldOut = map[string]bool{}
	if holdOut > 0 {
		labelled := map[string]bool{}
		for _, p := range c.Pairs {
			for _, id := range p.ToolIDs {
				labelled[id] = true
			}
		}
		byDS := map[string][]string{}
		for _, t := range c.Tools {
			if labelled[t.ID] {
				byDS[t.Dataset] = append(byDS[t.Dataset], t.ID)
			}
		}
		for _, ids := range byDS {
			sort.Slice(ids, func(i, j int) bool { return hashID(ids[i], seed) < hashID(ids[j], seed) })
			n := int(float64(len(ids))*holdOut + 0.5)
			for _, id := range ids[:n] {
				heldOut[id] = true
			}
		}
	}
	for _, p := range c.Pairs {
		val := false
		for _, id := range p.ToolIDs {
			val = val || heldOut[id]
		}
		if val {
			valPairs = append(valPairs, p)
		} else {
			trainPairs = append(trainPairs, p)
		}
	}
	return trainPairs, valPairs, heldOut
}

// addAux appends auxiliary pairs whose single tool id is "key|document
// text"; it returns the pairs with plain ids.
func (c *Corpus) addAux(pairs []Pair) []Pair {
	out := make([]Pair, 0, len(pairs))
	for _, p := range pairs {
		key, text, _ := strings.Cut(p.ToolIDs[0], "|")
		if _, ok := c.byID[key]; !ok {
			c.byID[key] = len(c.Tools)
			c.Tools = append(c.Tools, Tool{ID: key, Dataset: p.Dataset, Text: text})
		}
		out = append(out, Pair{Dataset: p.Dataset, Query: p.Query, ToolIDs: []string{key}})
	}
	return out
}

func hashID(id string, seed uint64) uint64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(id))
	return h.Sum64()
}
