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
//
// Each level is decoded into raw members and only the members it reads are
// decoded further (descriptions, titles, enums, nested properties and
// items, to maxSchemaDepth): decoding whole schemas into generic maps
// was most of the keyword index's build time.
func SchemaParams(raw json.RawMessage) []Param {
	if len(raw) == 0 {
		return nil
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil
	}
	var out []Param
	walkSchema(root, "", 0, &out)
	return out
}

// object decodes raw when it is a JSON object; nil otherwise.
func object(raw json.RawMessage) map[string]json.RawMessage {
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// text decodes raw when it is a JSON string; "" otherwise.
func text(raw json.RawMessage) string {
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func walkSchema(s map[string]json.RawMessage, prefix string, depth int, out *[]Param) {
	if depth > maxSchemaDepth || len(*out) > 200 {
		return
	}
	props := object(s["properties"])
	names := make([]string, 0, len(props))
	for n := range props {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		p := object(props[n])
		full := n
		if prefix != "" {
			full = prefix + "." + n
		}
		param := Param{Name: full}
		if p != nil {
			param.Description = text(p["description"])
			if param.Description == "" {
				param.Description = text(p["title"])
			}
			if raw := p["enum"]; len(raw) > 0 && raw[0] == '[' {
				var enum []json.RawMessage
				if json.Unmarshal(raw, &enum) == nil {
					for _, e := range enum {
						if len(param.Enum) < 20 && len(e) > 0 && e[0] == '"' {
							param.Enum = append(param.Enum, text(e))
						}
					}
				}
			}
		}
		*out = append(*out, param)
		if p == nil {
			continue
		}
		walkSchema(p, full, depth+1, out)
		if items := object(p["items"]); items != nil {
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
