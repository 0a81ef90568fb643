package gateway

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// strictArgs makes a meta-tool honour the additionalProperties: false of
// its input schema: a call naming an argument the schema does not have
// (top level, or in an item of an array of objects with
// additionalProperties: false, e.g. run_tools' calls) is refused with an
// invalid-params error that names the field, instead of the field being
// silently ignored.
func strictArgs(st server.ServerTool) server.ServerTool {
	var schema objectSchema
	if json.Unmarshal(st.Tool.RawInputSchema, &schema) != nil {
		return st
	}
	h := st.Handler
	st.Handler = func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := schema.check("", req.GetArguments()); err != nil {
			return mcp.NewToolResultErrorf("invalid params for %s: %v", st.Tool.Name, err), nil
		}
		return h(ctx, req)
	}
	return st
}

// objectSchema is the part of a meta-tool's JSON schema strictArgs reads.
type objectSchema struct {
	Properties           map[string]objectSchema `json:"properties"`
	AdditionalProperties *bool                   `json:"additionalProperties"`
	Items                *objectSchema           `json:"items"`
}

func (s objectSchema) check(path string, v any) error {
	switch v := v.(type) {
	case map[string]any:
		if s.AdditionalProperties == nil || *s.AdditionalProperties {
			return nil
		}
		var unknown []string
		for k := range v {
			if _, ok := s.Properties[k]; !ok {
				unknown = append(unknown, path+k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			known := make([]string, 0, len(s.Properties))
			for k := range s.Properties {
				known = append(known, k)
			}
			sort.Strings(known)
			noun := "field"
			if len(unknown) > 1 {
				noun = "fields"
			}
			return fmt.Errorf("unknown %s \"%s\" (known here: %s)", noun, strings.Join(unknown, `", "`), strings.Join(known, ", "))
		}
		for k, sub := range s.Properties {
			if err := sub.check(path+k+".", v[k]); err != nil {
				return err
			}
		}
	case []any:
		if s.Items == nil {
			return nil
		}
		for i, item := range v {
			if err := s.Items.check(fmt.Sprintf("%s[%d].", strings.TrimSuffix(path, "."), i), item); err != nil {
				return err
			}
		}
	}
	return nil
}
