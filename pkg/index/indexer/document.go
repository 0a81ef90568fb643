package indexer

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Param is one input parameter of a tool, read from its input schema.
// Nested object properties and array items are included with dotted names
// ("filter.status").
type Param struct {
	Name        string
	Description string
	Enum        []string
}

// maxSchemaDepth bounds the walk through nested schemas (and stops cycles
// through hand-written "$ref"-free but self-similar schemas from blowing up).
const maxSchemaDepth = 4

// SchemaParams lists the parameters of an input schema in a stable order
// (sorted by name at each level). A malformed schema yields no parameters.
func SchemaParams(raw json.RawMessage) []Param {
	if len(raw) == 0 {
		return nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil
	}
	var out []Param
	walkSchema(root, "", 0, &out)
	return out
}

func walkSchema(s map[string]any, prefix string, depth int, out *[]Param) {
	if depth > maxSchemaDepth || len(*out) > 200 {
		return
	}
	props, _ := s["properties"].(map[string]any)
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p, _ := props[n].(map[string]any)
		full := n
		if prefix != "" {
			full = prefix + "." + n
		}
		param := Param{Name: full}
		if p != nil {
			param.Description, _ = p["description"].(string)
			if param.Description == "" {
				param.Description, _ = p["title"].(string)
			}
			if enum, ok := p["enum"].([]any); ok {
				for _, e := range enum {
					if s, ok := e.(string); ok && len(param.Enum) < 20 {
						param.Enum = append(param.Enum, s)
					}
				}
			}
		}
		*out = append(*out, param)
		if p == nil {
			continue
		}
		walkSchema(p, full, depth+1, out)
		if items, ok := p["items"].(map[string]any); ok {
			walkSchema(items, full, depth+1, out)
		}
	}
}

// Document is the text a tool is embedded as ("enrichment"): its name split
// into words, title, description, tool type, server id and description,
// parameter names and descriptions, and tags. srv may be the zero Server
// when the server record is unknown.
func Document(t catalog.Tool, srv catalog.Server) string {
	var b strings.Builder
	line := func(parts ...string) {
		s := strings.TrimSpace(strings.Join(parts, " "))
		if s == "" {
			return
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(s)
	}
	line(strings.Join(catalog.SplitName(t.Name), " "))
	line(t.Title)
	line(t.Description)
	if t.ToolType != "" {
		line("tool type:", t.ToolType)
	}
	server := strings.Join(catalog.SplitName(t.Server), " ")
	line("server:", server, srv.Title, srv.Description)
	for _, p := range SchemaParams(t.InputSchema) {
		words := strings.Join(catalog.SplitName(p.Name), " ")
		if p.Description != "" {
			line(words+":", p.Description)
		} else {
			line(words)
		}
	}
	if len(t.Tags) > 0 {
		line("tags:", strings.Join(t.Tags, ", "))
	}
	return b.String()
}
