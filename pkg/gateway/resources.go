package gateway

// Prompts and resources: their handlers and the mapping of upstream
// resource URIs into the gateway namespace.

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"github.com/yosida95/uritemplate/v3"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
)

func (g *Server) promptHandler(srv, name string) server.PromptHandlerFunc {
	return func(ctx context.Context, req mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		pol, ok := policy.FromContext(ctx)
		if !ok || !pol.AllowsPrompt(srv, name) {
			return nil, fmt.Errorf("prompt %q not found", req.Params.Name)
		}
		ictx, err := g.withIdentity(g.withRelay(ctx), srv)
		if err != nil {
			return nil, fmt.Errorf("prompt %s: %w", req.Params.Name, err)
		}
		res, err := g.cfg.Upstreams.GetPrompt(ictx, srv, name, req.Params.Arguments)
		if err != nil {
			return nil, fmt.Errorf("prompt %s: %w", req.Params.Name, g.callerError(ctx, srv, err))
		}
		return res, nil
	}
}

func (g *Server) resourceHandler() server.ResourceHandlerFunc {
	return func(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
		if id, ok := resultID(req.Params.URI); ok {
			return g.readResult(ctx, req.Params.URI, id)
		}
		srv, orig, prefixed, ok := g.resolveExposed(req.Params.URI)
		pol, authed := policy.FromContext(ctx)
		if !ok || !authed || !pol.AllowsURI(srv, orig) {
			return nil, fmt.Errorf("%w: %s", server.ErrResourceNotFound, req.Params.URI)
		}
		ictx, err := g.withIdentity(g.withRelay(ctx), srv)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
		}
		res, err := g.cfg.Upstreams.ReadResource(ictx, srv, orig)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", req.Params.URI, g.callerError(ctx, srv, err))
		}
		if !prefixed {
			return res.Contents, nil // an unprefixed server's URIs are exposed as they are
		}
		out := make([]mcp.ResourceContents, 0, len(res.Contents))
		for _, c := range res.Contents {
			out = append(out, rewriteContentsURI(srv, c))
		}
		return out, nil
	}
}

func rewriteContentsURI(srv string, c mcp.ResourceContents) mcp.ResourceContents {
	// A pointer is copied first so the caller's value is left as it was.
	switch v := c.(type) {
	case *mcp.TextResourceContents:
		c = *v
	case *mcp.BlobResourceContents:
		c = *v
	}
	switch v := c.(type) {
	case mcp.TextResourceContents:
		v.URI = GatewayURI(srv, v.URI)
		return v
	case mcp.BlobResourceContents:
		v.URI = GatewayURI(srv, v.URI)
		return v
	}
	return c
}

// GatewayURI maps an upstream resource URI into the gateway namespace:
// gateway://<server>/<original URI>, and an MCP App's ui://<rest> to
// ui://<server>/<rest> (hosts render only ui:// URIs). The mapping is
// lossless because server ids never contain "/".
func GatewayURI(server, uri string) string {
	if strings.HasPrefix(uri, uiScheme) {
		return uiURI(server, uri)
	}
	return "gateway://" + server + "/" + uri
}

// resolveURI maps an exposed resource URI to its server and original URI:
// gateway://server/uri, ui://server/rest, or a URI of an unprefixed server.
// The original URI comes back in canonical form (policy.CanonicalURI): it is what the
// policy checks and what the upstream receives. A URI that cannot be made
// canonical resolves to nothing.
func (g *Server) resolveURI(u string) (server, uri string, ok bool) {
	server, uri, _, ok = g.resolveExposed(u)
	return server, uri, ok
}

// resolveExposed is resolveURI, and whether u is a URI of the gateway's
// namespace (prefixed), whose contents are mapped back into it. An
// unprefixed server's own ui:// URIs are matched before the ui://server/
// form, its templates after it.
func (g *Server) resolveExposed(u string) (server, uri string, prefixed, ok bool) {
	if strings.HasPrefix(u, "gateway://") {
		if server, uri, ok = ParseGatewayURI(u); !ok {
			return "", "", false, false
		}
		canon, err := policy.CanonicalURI(uri)
		if err != nil {
			return "", "", false, false
		}
		return server, canon, true, true
	}
	canon, err := policy.CanonicalURI(u)
	if err != nil {
		return "", "", false, false
	}
	names := g.surfNames.Load()
	if o, found := names.resources[canon]; found {
		return o.server, o.name, false, true
	}
	if server, uri, ok = parseUIURI(u); ok {
		if c, err := policy.CanonicalURI(uri); err == nil {
			return server, c, true, true
		}
	}
	for _, t := range names.templates {
		if t.tmpl.Regexp().MatchString(canon) {
			return t.server, canon, false, true
		}
	}
	return "", "", false, false
}

// ParseGatewayURI reverses GatewayURI.
func ParseGatewayURI(u string) (server, uri string, ok bool) {
	rest, found := strings.CutPrefix(u, "gateway://")
	if !found {
		return parseUIURI(u)
	}
	server, uri, found = strings.Cut(rest, "/")
	if !found || catalog.ValidServerID(server) != nil {
		return "", "", false
	}
	return server, uri, true
}

func mustTemplate(raw string) *mcp.URITemplate {
	t, err := uritemplate.New(raw)
	if err != nil {
		return nil
	}
	return &mcp.URITemplate{Template: t}
}
