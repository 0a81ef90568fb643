package gateway

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/policy"
)

// Completer is the optional part of Upstreams that forwards
// completion/complete (pkg/upstream.Manager has it). Without it the
// gateway answers every completion with an empty list.
type Completer interface {
	Complete(ctx context.Context, server string, req mcp.CompleteRequest) (*mcp.CompleteResult, error)
}

// completions forwards completion/complete to the upstream owning the
// referenced prompt or resource template, under the caller's policy: a
// prompt or template the caller cannot see gets the same "not found"
// answer as one that does not exist.
type completions struct{ g *Server }

var (
	_ server.PromptCompletionProvider   = completions{}
	_ server.ResourceCompletionProvider = completions{}
)

func (c completions) CompletePromptArgument(ctx context.Context, name string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	pol, ok := policy.FromContext(ctx)
	o, known := c.g.surfNames.Load().prompts[name]
	if !ok || !known || !pol.AllowsPrompt(o.server, o.name) {
		return nil, fmt.Errorf("prompt %q not found", name)
	}
	return c.forward(ctx, o.server, mcp.PromptReference{Type: "ref/prompt", Name: o.name}, arg, cctx)
}

func (c completions) CompleteResourceArgument(ctx context.Context, uri string, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	pol, ok := policy.FromContext(ctx)
	srv, orig, known := c.g.resolveRef(uri)
	if !ok || !known || !allowsRef(pol, srv, orig) {
		return nil, fmt.Errorf("%w: %s", server.ErrResourceNotFound, uri)
	}
	return c.forward(ctx, srv, mcp.ResourceReference{Type: "ref/resource", URI: orig}, arg, cctx)
}

func (c completions) forward(ctx context.Context, srv string, ref any, arg mcp.CompleteArgument, cctx mcp.CompleteContext) (*mcp.Completion, error) {
	up, ok := c.g.cfg.Upstreams.(Completer)
	if !ok {
		return &mcp.Completion{Values: []string{}}, nil
	}
	req := mcp.CompleteRequest{}
	req.Method = string(mcp.MethodCompletionComplete)
	req.Params.Ref, req.Params.Argument, req.Params.Context = ref, arg, cctx
	res, err := up.Complete(ctx, srv, req)
	if err != nil {
		return nil, c.g.callerError(ctx, srv, err)
	}
	return &res.Completion, nil
}

// resolveRef maps the URI of a ref/resource to its server and original
// URI: a resource template must be one the gateway lists, exactly as
// listed (the upstream gets its own template); anything else is a resource
// URI, made canonical like every other (see resolveURI).
func (g *Server) resolveRef(uri string) (server, orig string, ok bool) {
	if strings.Contains(uri, "{") {
		o, found := g.surfNames.Load().exposedTemplates[uri]
		return o.server, o.name, found
	}
	return g.resolveURI(uri)
}

// allowsRef applies the listing rule: a template is visible when it can
// produce a granted URI, a plain URI when it is granted.
func allowsRef(pol policy.Policy, srv, orig string) bool {
	prefix, _, isTemplate := strings.Cut(orig, "{")
	if isTemplate {
		return pol.AllowsServer(srv) && pol.MayAllowURIPrefix(srv, prefix)
	}
	return pol.AllowsURI(srv, orig)
}
