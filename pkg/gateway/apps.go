package gateway

// MCP Apps (the io.modelcontextprotocol/ui extension) through the gateway:
//
//   - The gateway declares the extension to its clients and, as a client,
//     to its upstreams (upstream.Extensions).
//   - An app's ui:// resources are mapped under the server's prefix with
//     their scheme kept (ui://<server>/<rest of the upstream URI>: hosts
//     only render ui:// URIs), in resource lists, tool records and results
//     (_meta.ui.resourceUri), and back when a host reads them.
//   - App-only tools (_meta.ui.visibility ["app"]) are for the app, not the
//     model: find_tools never returns them (pkg/retrieve), the meta-tools
//     refuse them, and tools/list shows them only to clients that declared
//     the extension (hosts, which keep them from the model and let the app
//     call them). A direct tools/call reaches them under the key's policy.

import (
	"context"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

const uiScheme = "ui://"

// uiClient reports whether the client of ctx declared the MCP Apps
// extension.
func uiClient(ctx context.Context) bool {
	caps, ok := clientCapabilities(ctx)
	if !ok || caps.Extensions == nil {
		return false
	}
	v, declared := caps.Extensions[upstream.AppsExtension]
	return declared && v != nil
}

// appOnlyRefusal answers a meta-tool asked for an app-only tool.
func appOnlyRefusal(callName string) *mcp.CallToolResult {
	return mcp.NewToolResultErrorf("tool %q is called only by its MCP App (its _meta.ui.visibility is [\"app\"]), not by the model", callName)
}

// appOnlyTool reports whether callName names an app-only tool of set.
func (s *toolSet) appOnlyTool(callName string) bool {
	id, ok := s.resolve(callName)
	return ok && s.appOnly[id]
}

// appOnlyIDs lists the app-only tools of tools (nil when there are none).
func appOnlyIDs(tools []catalog.Tool) map[string]bool {
	var out map[string]bool
	for _, t := range tools {
		if catalog.AppOnly(t) {
			if out == nil {
				out = map[string]bool{}
			}
			out[t.ID] = true
		}
	}
	return out
}

// uiURI maps an upstream ui:// URI under the server's prefix:
// ui://weather/view.html of server srv is ui://srv/weather/view.html.
func uiURI(srv, uri string) string {
	return uiScheme + srv + "/" + strings.TrimPrefix(uri, uiScheme)
}

// parseUIURI reverses uiURI.
func parseUIURI(u string) (server, uri string, ok bool) {
	rest, found := strings.CutPrefix(u, uiScheme)
	if !found {
		return "", "", false
	}
	server, path, found := strings.Cut(rest, "/")
	if !found || path == "" || catalog.ValidServerID(server) != nil {
		return "", "", false
	}
	return server, uiScheme + path, true
}

// claimsServer reports whether u, a URI of an unprefixed server, has the
// ui://<server>/ form of a server in servers: it is exposed prefixed then,
// so that it never shadows that server's apps.
func claimsServer[V any](u string, servers map[string]V) bool {
	srv, _, ok := parseUIURI(u)
	if !ok {
		return false
	}
	_, taken := servers[srv]
	return taken
}

// gatewayExtensions is the extensions capability the gateway declares to
// its clients: MCP Apps, and the tasks extension when it keeps task
// records.
func gatewayExtensions(tasks bool) map[string]any {
	exts := upstream.Extensions()
	if tasks {
		exts[TasksExtension] = map[string]any{}
	}
	return exts
}
