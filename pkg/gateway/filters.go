package gateway

// The policy filters of the lists a caller sees: tools, prompts, resources
// and resource templates.

import (
	"context"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

func (g *Server) filterTools(ctx context.Context, tools []mcp.Tool) []mcp.Tool {
	pol, ok := policy.FromContext(ctx)
	if !ok {
		return nil
	}
	listing := requestMethod(ctx) != string(mcp.MethodToolsCall)
	var registered map[string]bool
	if listing && !pol.Admin {
		registered = map[string]bool{}
		if sid := sessionID(ctx); sid != "" {
			ids, err := g.cfg.Sessions.Tools(ctx, sid)
			if err != nil {
				g.log.Warn("session store: could not read registered tools", "error", err)
			}
			for _, id := range ids {
				registered[id] = true
			}
		}
	}
	set := g.tools.Load()
	// App-only tools are listed to hosts that declared MCP Apps (they keep
	// them from the model), to everyone else never.
	ui := listing && len(set.appOnly) > 0 && uiClient(ctx)
	if ui && registered != nil {
		for id := range set.appOnly {
			registered[set.name(id)] = true
		}
	}
	out := make([]mcp.Tool, 0, len(tools))
	for _, t := range tools {
		if isMeta(t.Name) {
			out = append(out, t)
			continue
		}
		id, known := set.resolve(t.Name)
		rec, ok := set.byID[id]
		if !known || !ok || !pol.AllowsTool(rec.Server, rec.Name) {
			continue
		}
		if listing && !ui && set.appOnly[id] {
			continue
		}
		if registered != nil && !registered[t.Name] {
			continue
		}
		out = append(out, t)
	}
	if len(registered) > 0 && !g.listBuilt.Load() {
		out = g.appendRegistered(out, set, pol, registered)
	}
	return out
}

// appendRegistered adds to a tools/list answer the session's registered
// tools that mcp-go does not hold because the MCP tool list is not built
// (Config.LazyToolList), keeping the answer sorted by name as mcp-go
// sorts it.
func (g *Server) appendRegistered(out []mcp.Tool, set *toolSet, pol policy.Policy, registered map[string]bool) []mcp.Tool {
	listed := make(map[string]bool, len(out))
	for _, t := range out {
		listed[t.Name] = true
	}
	added := false
	for name := range registered {
		if listed[name] {
			continue
		}
		id, known := set.resolve(name)
		rec, ok := set.byID[id]
		if !known || !ok || !pol.AllowsTool(rec.Server, rec.Name) {
			continue
		}
		if mt, ok := g.listedTool(set, rec); ok && mt.Name == name {
			out, added = append(out, mt), true
		}
	}
	if added {
		slices.SortFunc(out, func(a, b mcp.Tool) int { return strings.Compare(a.Name, b.Name) })
	}
	return out
}

func (g *Server) filterPrompts(ctx context.Context, prompts []mcp.Prompt) []mcp.Prompt {
	pol, ok := policy.FromContext(ctx)
	if !ok {
		return nil
	}
	names := g.surfNames.Load()
	out := make([]mcp.Prompt, 0, len(prompts))
	for _, p := range prompts {
		if o, ok := names.prompts[p.Name]; ok && pol.AllowsPrompt(o.server, o.name) {
			out = append(out, p)
		}
	}
	return out
}

func (g *Server) filterResources(ctx context.Context, rs []mcp.Resource) []mcp.Resource {
	return allowed(ctx, rs, func(pol policy.Policy, r mcp.Resource) bool {
		srv, orig, ok := g.resolveURI(r.URI)
		return ok && pol.AllowsURI(srv, orig)
	})
}

func (g *Server) filterTemplates(ctx context.Context, ts []mcp.ResourceTemplate) []mcp.ResourceTemplate {
	return allowed(ctx, ts, func(pol policy.Policy, t mcp.ResourceTemplate) bool {
		if t.Name == catchAllName || t.URITemplate == nil {
			return false
		}
		o, ok := g.surfNames.Load().exposedTemplates[t.URITemplate.Raw()]
		srv, orig := o.server, o.name
		if !ok || !pol.AllowsServer(srv) {
			return false
		}
		// A template is listed when it can produce a granted URI.
		prefix, _, _ := strings.Cut(orig, "{")
		return pol.MayAllowURIPrefix(srv, prefix)
	})
}

// allowed returns the items the request's policy lets it see (keep says
// which), none without a policy.
func allowed[T any](ctx context.Context, items []T, keep func(policy.Policy, T) bool) []T {
	pol, ok := policy.FromContext(ctx)
	out := make([]T, 0, len(items))
	if !ok {
		return out
	}
	for _, it := range items {
		if keep(pol, it) {
			out = append(out, it)
		}
	}
	return out
}

// ---- direct calls and run_tool ----
