package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"

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
func (g *Server) upstreamTool(t catalog.Tool, name string) json.RawMessage {
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
	if raw, ok := fields["_meta"]; ok && !g.isUnprefixed(t.Server) {
		var m map[string]any
		if json.Unmarshal(raw, &m) == nil && m != nil {
			if b, err := json.Marshal(gatewayMetaURIs(t.Server, m)); err == nil {
				fields["_meta"] = b
			}
		}
	}
	if len(t.Annotations) > 0 {
		fields["annotations"] = t.Annotations
	}
	b, _ := json.Marshal(fields)
	return b
}

// gatewayToolMeta maps the resource references of a listed tool's _meta
// (an MCP App's ui.resourceUri) into the gateway's namespace.
func (g *Server) gatewayToolMeta(mt *mcp.Tool, srv string) {
	if mt.Meta == nil || g.isUnprefixed(srv) {
		return
	}
	mt.Meta = &mcp.Meta{ProgressToken: mt.Meta.ProgressToken, AdditionalFields: gatewayMetaURIs(srv, mt.Meta.AdditionalFields)}
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

// Resource links in tool results. An upstream's result names its own
// resources (resource_link content, embedded resources, _meta.ui.resourceUri);
// a client reads them through the gateway, so they are mapped into the
// gateway's namespace (GatewayURI), where resources/read maps them back and
// checks the key's grant. An unprefixed server's URIs are exposed as they
// are. Arguments a client sends back to a tool of that server go the
// other way (upstreamArgs).

// gatewayLinks rewrites the resource URIs of res, a result of server srv,
// in place.
func (g *Server) gatewayLinks(srv string, res *mcp.CallToolResult) {
	if res == nil || g.isUnprefixed(srv) {
		return
	}
	for i, c := range res.Content {
		// A pointer is copied first so the caller's value is left as it was.
		switch v := c.(type) {
		case *mcp.ResourceLink:
			c = *v
		case *mcp.EmbeddedResource:
			c = *v
		}
		switch v := c.(type) {
		case mcp.ResourceLink:
			v.URI = GatewayURI(srv, v.URI)
			res.Content[i] = v
		case mcp.EmbeddedResource:
			v.Resource = rewriteContentsURI(srv, v.Resource)
			res.Content[i] = v
		}
	}
	if res.Meta != nil {
		res.Meta.AdditionalFields = gatewayMetaURIs(srv, res.Meta.AdditionalFields)
	}
}

// gatewayMetaURIs maps the resource references a _meta object holds (the
// MCP Apps extension's ui.resourceUri and its older ui/resourceUri key)
// into the gateway's namespace; it returns m, or a changed copy.
func gatewayMetaURIs(srv string, m map[string]any) map[string]any {
	if m == nil {
		return m
	}
	out, copied := m, false
	own := func() {
		if !copied {
			out, copied = copyMap(m), true
		}
	}
	if ui, ok := m["ui"].(map[string]any); ok {
		if u, ok := ui["resourceUri"].(string); ok && u != "" {
			cp := make(map[string]any, len(ui))
			for k, v := range ui {
				cp[k] = v
			}
			cp["resourceUri"] = GatewayURI(srv, u)
			own()
			out["ui"] = cp
		}
	}
	if u, ok := m["ui/resourceUri"].(string); ok && u != "" {
		own()
		out["ui/resourceUri"] = GatewayURI(srv, u)
	}
	return out
}

func copyMap(m map[string]any) map[string]any {
	cp := make(map[string]any, len(m))
	for k, v := range m {
		cp[k] = v
	}
	return cp
}

// upstreamArgs maps the gateway URIs of server srv in a tool's arguments
// (a link the client got from a result and sends back) to the upstream's
// own URIs. Only whole string values that are such URIs change.
func (g *Server) upstreamArgs(srv string, args map[string]any) map[string]any {
	if g.isUnprefixed(srv) {
		return args
	}
	prefix := GatewayURI(srv, "")
	var walk func(v any) (any, bool)
	walk = func(v any) (any, bool) {
		switch x := v.(type) {
		case string:
			if orig, ok := strings.CutPrefix(x, prefix); ok {
				return orig, true
			}
		case map[string]any:
			var cp map[string]any
			for k, e := range x {
				if n, changed := walk(e); changed {
					if cp == nil {
						cp = make(map[string]any, len(x))
						for k2, e2 := range x {
							cp[k2] = e2
						}
					}
					cp[k] = n
				}
			}
			if cp != nil {
				return cp, true
			}
		case []any:
			var cp []any
			for i, e := range x {
				if n, changed := walk(e); changed {
					if cp == nil {
						cp = append([]any(nil), x...)
					}
					cp[i] = n
				}
			}
			if cp != nil {
				return cp, true
			}
		}
		return v, false
	}
	if out, changed := walk(args); changed {
		return out.(map[string]any)
	}
	return args
}

// capSurfaces cuts each server's prompts, resources and resource templates
// to Config.MaxListItems, and records the servers it cut (ListsDegraded).
func (g *Server) capSurfaces(next map[string]serverSurface) {
	limit := g.cfg.MaxListItems
	if limit <= 0 {
		limit = 2000
	}
	degraded := map[string]string{}
	for id, s := range next {
		var over []string
		if n := len(s.prompts); n > limit {
			s.prompts = s.prompts[:limit]
			over = append(over, fmt.Sprintf("%d prompts", n))
		}
		if n := len(s.resources); n > limit {
			s.resources = s.resources[:limit]
			over = append(over, fmt.Sprintf("%d resources", n))
		}
		if n := len(s.templates); n > limit {
			s.templates = s.templates[:limit]
			over = append(over, fmt.Sprintf("%d resource templates", n))
		}
		if len(over) > 0 {
			next[id] = s
			sort.Strings(over)
			degraded[id] = fmt.Sprintf("server %q lists %s, more than the limit of %d each (TOOL_RAG_MAX_TOOLS_PER_SERVER); only the first %d are served",
				id, strings.Join(over, " and "), limit, limit)
			g.log.Warn("upstream degraded: its prompt or resource list is over the gateway's limits", "server", id, "reason", degraded[id])
		}
	}
	g.listsDegraded.Store(&degraded)
}

// ListsDegraded names the servers whose prompts, resources or resource
// templates went over Config.MaxListItems at the last reload, with why.
func (g *Server) ListsDegraded() map[string]string {
	if p := g.listsDegraded.Load(); p != nil {
		return maps.Clone(*p)
	}
	return nil
}

// Fields of an upstream tool that mcp-go's Tool cannot carry (a field a
// later MCP revision adds, a vendor's own, an unknown key inside
// annotations, execution or icons) still reach clients in tools/list: the
// gateway sets them, as the upstream sent them, over what mcp-go wrote for
// each listed tool (mcpfix.PatchList). A catalog without such fields costs
// nothing.

// listedFields are the members of a listed tool mcp-go writes itself.
var listedFields = map[string]bool{
	"name": true, "title": true, "description": true, "inputSchema": true, "outputSchema": true,
	"annotations": true, "_meta": true, "icons": true, "execution": true, "defer_loading": true,
}

// typedMembers are, for the members of a listed tool mcp-go decodes into
// a type of its own, the members that type has.
var typedMembers = map[string]map[string]bool{
	"annotations": {"title": true, "readOnlyHint": true, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true},
	"execution":   {"taskSupport": true},
	"icons":       {"src": true, "mimeType": true, "sizes": true, "theme": true}, // of each icon
}

// carried reports whether mcp-go's type for member k holds every key of v
// (for icons: of each icon).
func carried(k string, v json.RawMessage) bool {
	objs := []map[string]json.RawMessage{}
	if k == "icons" {
		if json.Unmarshal(v, &objs) != nil {
			return false
		}
	} else {
		var o map[string]json.RawMessage
		if json.Unmarshal(v, &o) != nil {
			return false
		}
		objs = append(objs, o)
	}
	for _, o := range objs {
		for key := range o {
			if !typedMembers[k][key] {
				return false
			}
		}
	}
	return true
}

// verbatimFields maps the ids of tools with members mcp-go's Tool does not
// carry as the upstream sent them to those members (nil when no tool has
// any): members it does not know, and annotations, execution or icons
// with keys its types do not have.
func verbatimFields(tools []catalog.Tool) map[string]map[string]json.RawMessage {
	var out map[string]map[string]json.RawMessage
	for _, t := range tools {
		var fields map[string]json.RawMessage
		if len(t.Extra) > 0 {
			_ = json.Unmarshal(t.Extra, &fields)
		}
		for k, v := range fields {
			if listedFields[k] && (typedMembers[k] == nil || carried(k, v)) {
				delete(fields, k)
			}
		}
		if len(t.Annotations) > 0 && !carried("annotations", t.Annotations) {
			if fields == nil {
				fields = map[string]json.RawMessage{}
			}
			fields["annotations"] = t.Annotations
		}
		if len(fields) == 0 {
			continue
		}
		if out == nil {
			out = map[string]map[string]json.RawMessage{}
		}
		out[t.ID] = fields
	}
	return out
}

// patchListed sets over a listed tool of a tools/list answer the members
// mcp-go left out or changed (verbatimFields).
func (s *toolSet) patchListed(tool map[string]json.RawMessage) bool {
	var name string
	if json.Unmarshal(tool["name"], &name) != nil {
		return false
	}
	id, ok := s.resolve(name)
	if !ok || len(s.verbatim[id]) == 0 {
		return false
	}
	for k, v := range s.verbatim[id] {
		tool[k] = v
	}
	return true
}
