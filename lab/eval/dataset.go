package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"

	"github.com/toolrag/mcp-gateway/lab/jsonl"
	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Dataset is a retrieval benchmark: a tool catalog and queries with their
// relevant tools (the format of ../shared/bench/*: tools.jsonl,
// queries.jsonl).
type Dataset struct {
	Name    string
	Tools   []catalog.Tool   // finalized (catalog.Finalize), sorted by id
	Servers []catalog.Server // sorted by id
	Queries []Query
}

// Query is one benchmark query.
type Query struct {
	ID       string     `json:"id"`
	Query    string     `json:"query"`
	Relevant []string   `json:"relevant"`
	Groups   [][]string `json:"relevant_groups,omitempty"`
	// Set optionally names the part of a composite set the query comes
	// from (FromTrainingSet: the training dataset); reports break the
	// figures down by it.
	Set string `json:"set,omitempty"`
}

// toolLine is one line of tools.jsonl.
type toolLine struct {
	ID                string          `json:"id"`
	Server            string          `json:"server"`
	Name              string          `json:"name"`
	Title             string          `json:"title"`
	Description       string          `json:"description"`
	InputSchema       json.RawMessage `json:"input_schema"`
	OutputSchema      json.RawMessage `json:"output_schema"`
	ServerTitle       string          `json:"server_title"`
	ServerDescription string          `json:"server_description"`
	Category          string          `json:"category"`
	Tags              []string        `json:"tags"`
}

// LoadDataset reads dir/tools.jsonl and dir/queries.jsonl. Tool records are
// finalized with catalog.Finalize (type, scope, content hash). The
// category field is not used: it is benchmark metadata, not something an
// MCP server reports.
func LoadDataset(dir string) (*Dataset, error) {
	ds := &Dataset{Name: filepath.Base(filepath.Clean(dir))}
	servers := map[string]*catalog.Server{}
	seen := map[string]bool{}
	err := readJSONL(filepath.Join(dir, "tools.jsonl"), func(line int, raw []byte) error {
		var tl toolLine
		if err := json.Unmarshal(raw, &tl); err != nil {
			return err
		}
		if tl.Server == "" || tl.Name == "" {
			return fmt.Errorf("\"server\" and \"name\" are required")
		}
		if err := catalog.ValidServerID(tl.Server); err != nil {
			return err
		}
		t := catalog.Tool{
			ID: tl.ID, Server: tl.Server, Name: tl.Name, Title: tl.Title,
			Description: tl.Description, InputSchema: tl.InputSchema, Tags: tl.Tags,
		}
		if string(t.InputSchema) == "null" {
			t.InputSchema = nil
		}
		if len(tl.OutputSchema) > 0 && string(tl.OutputSchema) != "null" {
			t.Extra, _ = json.Marshal(map[string]json.RawMessage{"outputSchema": tl.OutputSchema})
		}
		if t.ID == "" {
			t.ID = catalog.ToolID(t.Server, t.Name)
		}
		if t.ID != catalog.ToolID(t.Server, t.Name) {
			return fmt.Errorf("id %q is not server__name (%q)", t.ID, catalog.ToolID(t.Server, t.Name))
		}
		if seen[t.ID] {
			return fmt.Errorf("duplicate tool id %q", t.ID)
		}
		seen[t.ID] = true
		catalog.Finalize(&t)
		ds.Tools = append(ds.Tools, t)
		s := servers[t.Server]
		if s == nil {
			s = &catalog.Server{ID: t.Server, Status: catalog.StatusActive}
			servers[t.Server] = s
		}
		if s.Title == "" {
			s.Title = tl.ServerTitle
		}
		if s.Description == "" {
			s.Description = tl.ServerDescription
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	err = readJSONL(filepath.Join(dir, "queries.jsonl"), func(line int, raw []byte) error {
		var q Query
		if err := json.Unmarshal(raw, &q); err != nil {
			return err
		}
		if q.Query == "" || len(q.Relevant) == 0 {
			return fmt.Errorf("\"query\" and \"relevant\" are required")
		}
		for _, id := range q.Relevant {
			if !seen[id] {
				return fmt.Errorf("relevant tool %q is not in tools.jsonl", id)
			}
		}
		ds.Queries = append(ds.Queries, q)
		return nil
	})
	if err != nil {
		return nil, err
	}
	sort.Slice(ds.Tools, func(i, j int) bool { return ds.Tools[i].ID < ds.Tools[j].ID })
	for _, s := range servers {
		ds.Servers = append(ds.Servers, *s)
	}
	sort.Slice(ds.Servers, func(i, j int) bool { return ds.Servers[i].ID < ds.Servers[j].ID })
	return ds, nil
}

// readJSONL is jsonl.ReadFile with the package's prefix on its errors.
func readJSONL(path string, fn func(line int, raw []byte) error) error {
	if err := jsonl.ReadFile(path, fn); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// Source puts a dataset's catalog into a store. DirectSource writes the
// records as they are; other sources can, for example, serve the tools from
// real MCP upstreams and run the gateway's sync.
type Source interface {
	Load(ctx context.Context, ds *Dataset, st catalog.Store) error
}

// DirectSource writes each server's tools with ReplaceServerTools.
type DirectSource struct{}

// Load implements Source.
func (DirectSource) Load(ctx context.Context, ds *Dataset, st catalog.Store) error {
	byServer := map[string][]catalog.Tool{}
	for _, t := range ds.Tools {
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	for _, s := range ds.Servers {
		if _, _, err := st.ReplaceServerTools(ctx, s, byServer[s.ID]); err != nil {
			return fmt.Errorf("eval: storing the tools of %q: %w", s.ID, err)
		}
	}
	return nil
}
