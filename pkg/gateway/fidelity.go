package gateway

import (
	"encoding/json"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// A tool reaches clients with every field its upstream gave it: the
// catalog keeps the fields it does not index in catalog.Tool.Extra, as the
// upstream sent them, and the gateway serves them unchanged under the
// tool's exposed name.

// toolExtra is what tools/list can carry of catalog.Tool.Extra (the
// fields of the MCP Tool that mcp-go's Tool knows). describe_tool carries
// every field, known or not (upstreamTool).
type toolExtra struct {
	Title        *string            `json:"title"`
	OutputSchema json.RawMessage    `json:"outputSchema"`
	Meta         *mcp.Meta          `json:"_meta"`
	Icons        []mcp.Icon         `json:"icons"`
	Execution    *mcp.ToolExecution `json:"execution"`
}

// applyExtra sets the fields of mt held in extra.
func applyExtra(mt *mcp.Tool, extra json.RawMessage) {
	if len(extra) == 0 {
		return
	}
	var x toolExtra
	if json.Unmarshal(extra, &x) != nil {
		return
	}
	mt.Title = "" // the upstream's title only, not one the catalog derived
	if x.Title != nil {
		mt.Title = *x.Title
	}
	if len(x.OutputSchema) > 0 && string(x.OutputSchema) != "null" {
		mt.RawOutputSchema = x.OutputSchema
	}
	mt.Meta = x.Meta
	mt.Icons = x.Icons
	mt.Execution = x.Execution
}

// upstreamTool is the MCP Tool object of t under its exposed name: the
// fields the catalog indexes and every other field the upstream sent
// (Extra, which holds the title too when the upstream sent one).
func upstreamTool(t catalog.Tool, name string) json.RawMessage {
	fields := map[string]json.RawMessage{}
	if len(t.Extra) > 0 {
		_ = json.Unmarshal(t.Extra, &fields)
		if fields == nil {
			fields = map[string]json.RawMessage{}
		}
	}
	str := func(s string) json.RawMessage { b, _ := json.Marshal(s); return b }
	fields["name"] = str(name)
	if _, known := fields["title"]; !known && len(t.Extra) == 0 && t.Title != "" {
		fields["title"] = str(t.Title) // a record synced before Extra existed
	}
	if t.Description != "" {
		fields["description"] = str(t.Description)
	}
	fields["inputSchema"] = schemaOrEmpty(t.InputSchema)
	if len(t.Annotations) > 0 {
		fields["annotations"] = t.Annotations
	}
	b, _ := json.Marshal(fields)
	return b
}

// outputSchemaOf is the tool's outputSchema as its upstream sent it (nil
// when it has none).
func outputSchemaOf(t catalog.Tool) json.RawMessage {
	if len(t.Extra) == 0 {
		return nil
	}
	var x struct {
		OutputSchema json.RawMessage `json:"outputSchema"`
	}
	if json.Unmarshal(t.Extra, &x) != nil || string(x.OutputSchema) == "null" {
		return nil
	}
	return x.OutputSchema
}
