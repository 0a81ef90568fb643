package upstream

// AppsExtension is the MCP Apps extension (interactive UIs of tools,
// served as ui:// resources). The gateway declares it to its upstreams,
// so that servers which offer their app tools only to hosts able to show
// them list those tools to the gateway, and it declares it to its own
// clients (pkg/gateway).
const AppsExtension = "io.modelcontextprotocol/ui"

// AppsMIMEType is the MIME type of an MCP App's HTML resource.
const AppsMIMEType = "text/html;profile=mcp-app"

// Extensions is the extensions capability the gateway declares, as a
// client to its upstreams and as a server to its clients.
func Extensions() map[string]any {
	return map[string]any{AppsExtension: map[string]any{"mimeTypes": []string{AppsMIMEType}}}
}
