package indexer

import (
	"encoding/json"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

func TestSchemaParams(t *testing.T) {
	tests := []struct {
		schema string
		want   []Param
	}{
		{``, nil},
		{`not json`, nil},
		{`{"type":"object"}`, nil},
		{`{"properties":{"b":{"description":"second"},"a":{"title":"first","enum":["x",1,"y"]}}}`,
			[]Param{{Name: "a", Description: "first", Enum: []string{"x", "y"}}, {Name: "b", Description: "second"}}},
		{`{"properties":{"filter":{"type":"object","properties":{"status":{"description":"open or closed"}}},
		   "items":{"type":"array","items":{"properties":{"sku":{"description":"stock unit"}}}}}}`,
			[]Param{{Name: "filter"}, {Name: "filter.status", Description: "open or closed"}, {Name: "items"}, {Name: "items.sku", Description: "stock unit"}}},
		{`{"properties":{"x":true}}`, []Param{{Name: "x"}}},
	}
	for _, tt := range tests {
		if got := SchemaParams(json.RawMessage(tt.schema)); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SchemaParams(%s) = %+v, want %+v", tt.schema, got, tt.want)
		}
	}
}

func TestSchemaParamsDepthBound(t *testing.T) {
	s := `{"properties":{"a":{"description":"leaf"}}}`
	for range 50 {
		s = `{"properties":{"n":` + s + `}}`
	}
	if got := SchemaParams(json.RawMessage(s)); len(got) > maxSchemaDepth+2 {
		t.Errorf("deep schema gave %d params, want the walk bounded", len(got))
	}
}

func TestDocument(t *testing.T) {
	tool := catalog.Tool{
		Server: "github", Name: "createPullRequest", Title: "Open PR",
		Description: "Open a pull request.", ToolType: catalog.TypeAction,
		InputSchema: json.RawMessage(`{"properties":{"base_branch":{"description":"Branch to merge into"},"draft":{}}}`),
		Tags:        []string{"vcs", "review"},
	}
	srv := catalog.Server{ID: "github", Title: "GitHub", Description: "Repositories and issues."}
	got := Document(tool, srv)
	want := strings.Join([]string{
		"create pull request",
		"Open PR",
		"Open a pull request.",
		"tool type: action",
		"server: github GitHub Repositories and issues.",
		"base branch: Branch to merge into",
		"draft",
		"tags: vcs, review",
	}, "\n")
	if got != want {
		t.Errorf("Document =\n%s\nwant\n%s", got, want)
	}
	// Unknown server, no schema: still a useful document.
	if got := Document(catalog.Tool{Server: "x", Name: "ping"}, catalog.Server{}); got != "ping\nserver: x" {
		t.Errorf("minimal Document = %q", got)
	}
}

// schemaParamsGeneric is the previous SchemaParams, which decoded the whole
// schema into generic maps: the reference the faster one must agree with.
func schemaParamsGeneric(raw json.RawMessage) []Param {
	if len(raw) == 0 {
		return nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil {
		return nil
	}
	var out []Param
	var walk func(s map[string]any, prefix string, depth int)
	walk = func(s map[string]any, prefix string, depth int) {
		if depth > maxSchemaDepth || len(out) > 200 {
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
			out = append(out, param)
			if p == nil {
				continue
			}
			walk(p, full, depth+1)
			if items, ok := p["items"].(map[string]any); ok {
				walk(items, full, depth+1)
			}
		}
	}
	walk(root, "", 0)
	return out
}

// FuzzSchemaParams checks SchemaParams against the generic decoding.
func FuzzSchemaParams(f *testing.F) {
	for _, s := range []string{
		``, `null`, `[]`, `{"type":"object"}`, `{"properties":null}`, `{"properties":[]}`,
		`{"properties":{"b":{"description":"second"},"a":{"title":"first","enum":["x",1,"y",null,""]}}}`,
		`{"properties":{"f":{"type":"object","properties":{"s":{"description":"d\u00e9j\u00e0 \"vu\""}}},"i":{"items":{"properties":{"k":{}}}},"t":{"items":[{"properties":{"z":{}}}]}}}`,
		`{"properties":{"x":true,"y":null,"z":1,"w":"s"}}`,
		`{ "properties" : { "a" : { "description" : 5 , "title" : "t" } } , "properties" : { "b" : { } } }`,
		`{"properties":{"a":{"description":"","title":"","enum":"notalist"}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, want := SchemaParams(raw), schemaParamsGeneric(raw)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("SchemaParams(%q)\n = %+v\nwant %+v", raw, got, want)
		}
	})
}
