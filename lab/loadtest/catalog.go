package loadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/toolrag/mcp-gateway/lab/jsonl"
)

// BenchTool is one tool of a benchmark catalog (tools.jsonl).
type BenchTool struct {
	Server      string          `json:"server"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// LoadCatalog reads tools.jsonl from each directory, in order.
func LoadCatalog(dirs ...string) ([]BenchTool, error) {
	var out []BenchTool
	for _, dir := range dirs {
		err := jsonl.ReadFile(filepath.Join(dir, "tools.jsonl"), func(_ int, raw []byte) error {
			var t BenchTool
			if err := json.Unmarshal(raw, &t); err != nil {
				return err
			}
			if t.Server == "" || t.Name == "" {
				return errors.New("a tool needs server and name")
			}
			out = append(out, t)
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("read benchmark catalog: %w", err)
		}
	}
	return out, nil
}

// LoadQueries reads the "query" field of queries.jsonl in each directory;
// a directory without the file contributes nothing.
func LoadQueries(dirs ...string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		err := jsonl.ReadFile(filepath.Join(dir, "queries.jsonl"), func(_ int, raw []byte) error {
			var q struct {
				Query string `json:"query"`
			}
			if err := json.Unmarshal(raw, &q); err != nil {
				return err
			}
			if q.Query = strings.TrimSpace(q.Query); q.Query != "" {
				out = append(out, q.Query)
			}
			return nil
		})
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("read benchmark queries: %w", err)
		}
	}
	return out, nil
}

// UpstreamTool is a tool as one load-test upstream serves it.
type UpstreamTool struct {
	Name        string // unique within its upstream
	Description string
	InputSchema json.RawMessage
}

// Split distributes the catalog over n upstreams by the tools' server
// field: benchmark servers, sorted by id, are dealt round-robin, so every
// benchmark server lives on exactly one upstream. A tool name repeated
// within one upstream gets its benchmark server as a prefix.
func Split(tools []BenchTool, n int) [][]UpstreamTool {
	if n <= 0 {
		return nil
	}
	byServer := map[string][]BenchTool{}
	for _, t := range tools {
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	servers := make([]string, 0, len(byServer))
	for s := range byServer {
		servers = append(servers, s)
	}
	sort.Strings(servers)
	out := make([][]UpstreamTool, n)
	taken := make([]map[string]bool, n)
	for i := range taken {
		taken[i] = map[string]bool{}
	}
	for i, s := range servers {
		u := i % n
		for _, t := range byServer[s] {
			name := t.Name
			if taken[u][name] {
				name = sanitize(t.Server) + "_" + t.Name
			}
			if taken[u][name] {
				continue // the same tool twice in one benchmark server
			}
			taken[u][name] = true
			schema := t.InputSchema
			if len(bytes.TrimSpace(schema)) == 0 || string(schema) == "null" {
				schema = json.RawMessage(`{"type":"object"}`)
			}
			out[u] = append(out[u], UpstreamTool{Name: name, Description: t.Description, InputSchema: schema})
		}
	}
	return out
}

func sanitize(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '.':
			return r
		}
		return '_'
	}, s)
}

// SampleArgs builds arguments for a tool from its input schema: every
// required property gets its default, its first enum value or a small
// value of its type. ok is false when the arguments do not validate
// against the schema (such tools are left out of the call mix).
func SampleArgs(schema json.RawMessage) (args map[string]any, ok bool) {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return nil, false
	}
	args = map[string]any{}
	for _, name := range s.Required {
		raw, found := s.Properties[name]
		if !found {
			args[name] = "x"
			continue
		}
		args[name] = sampleValue(raw, 0)
	}
	return args, validates(schema, args)
}

func sampleValue(raw json.RawMessage, depth int) any {
	var p struct {
		Type       any                        `json:"type"`
		Enum       []any                      `json:"enum"`
		Default    any                        `json:"default"`
		AnyOf      []json.RawMessage          `json:"anyOf"`
		OneOf      []json.RawMessage          `json:"oneOf"`
		Items      json.RawMessage            `json:"items"`
		MinItems   int                        `json:"minItems"`
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
		Minimum    *float64                   `json:"minimum"`
	}
	if json.Unmarshal(raw, &p) != nil || depth > 4 {
		return "x"
	}
	if p.Default != nil {
		return p.Default
	}
	if len(p.Enum) > 0 {
		return p.Enum[0]
	}
	if alts := append(p.AnyOf, p.OneOf...); len(alts) > 0 {
		for _, a := range alts {
			if v := sampleValue(a, depth+1); v != nil {
				return v
			}
		}
	}
	typ, _ := p.Type.(string)
	if list, isList := p.Type.([]any); isList && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	switch typ {
	case "number", "integer":
		if p.Minimum != nil && *p.Minimum > 1 {
			return *p.Minimum
		}
		return 1
	case "boolean":
		return true
	case "array":
		n := max(p.MinItems, 1)
		out := make([]any, n)
		for i := range out {
			out[i] = "x"
			if len(p.Items) > 0 {
				out[i] = sampleValue(p.Items, depth+1)
			}
		}
		return out
	case "object":
		obj := map[string]any{}
		for _, name := range p.Required {
			obj[name] = "x"
			if r, ok := p.Properties[name]; ok {
				obj[name] = sampleValue(r, depth+1)
			}
		}
		return obj
	case "null":
		return nil
	}
	return "x"
}

// validates checks args against the schema the way the gateway does
// (offline, $schema and $id dropped); a schema that does not compile is
// not checked by the gateway either.
func validates(schema json.RawMessage, args map[string]any) bool {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return false
	}
	if m, ok := doc.(map[string]any); ok {
		delete(m, "$schema")
		delete(m, "$id")
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource("tool.json", doc); err != nil {
		return true
	}
	compiled, err := c.Compile("tool.json")
	if err != nil {
		return true
	}
	b, err := json.Marshal(args)
	if err != nil {
		return false
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		return false
	}
	return compiled.Validate(v) == nil
}

type noLoader struct{}

func (noLoader) Load(url string) (any, error) { return nil, fmt.Errorf("%s is not fetched", url) }
