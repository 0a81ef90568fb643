package indexer

import (
	"encoding/json"
	"reflect"
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
