package bridge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// Probe checks a running bridge the way its clients use it, for a
// container health check that needs no curl in the image: GET /health
// (the bridge pings the stdio server) must answer "ok", then an MCP
// client over Streamable HTTP at base+path initializes, pings and lists
// the tools. token is the hop credential ("" when the bridge has none).
// It returns a one-line summary, or why the bridge is not healthy.
func Probe(ctx context.Context, base, path, token string) (string, error) {
	base = strings.TrimSuffix(base, "/")
	headers := map[string]string{}
	if token != "" {
		headers["Authorization"] = "Bearer " + token
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/health", nil)
	if err != nil {
		return "", err
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", fmt.Errorf("bridge probe: GET %s/health: %w", base, err)
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	var h Health
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &h) != nil || h.Status != "ok" {
		return "", fmt.Errorf("bridge probe: GET /health answered %s: %s", resp.Status, strings.TrimSpace(string(body)))
	}
	c, err := client.NewStreamableHttpClient(base+path, transport.WithHTTPHeaders(headers))
	if err != nil {
		return "", fmt.Errorf("bridge probe: %w", err)
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		return "", fmt.Errorf("bridge probe: MCP client: %w", err)
	}
	init, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: "toolrag-bridge-probe", Version: "1"},
	}})
	if err != nil {
		return "", fmt.Errorf("bridge probe: MCP initialize at %s: %w", path, err)
	}
	if err := c.Ping(ctx); err != nil {
		return "", fmt.Errorf("bridge probe: MCP ping: %w", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return "", fmt.Errorf("bridge probe: MCP tools/list: %w", err)
	}
	return fmt.Sprintf("ok: %s %s, %d processes, %d tools over MCP", init.ServerInfo.Name, init.ServerInfo.Version, h.Processes, len(tools.Tools)), nil
}
