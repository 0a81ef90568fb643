package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/syncer"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// MCPSource serves each dataset server as a real in-process MCP server
// (mcp-go) and loads the catalog through the gateway's own sync path
// (syncer.Run over tools/list), so evaluation sees exactly the records the
// gateway would store.
type MCPSource struct{}

// Load implements Source.
func (MCPSource) Load(ctx context.Context, ds *Dataset, st catalog.Store) error {
	ups, err := newInProcessUpstreams(ctx, ds)
	if err != nil {
		return err
	}
	defer ups.close()
	rep, err := syncer.Run(ctx, syncer.Config{Upstreams: ups, Store: st, Parallel: 8})
	if err != nil {
		return fmt.Errorf("eval: sync: %w", err)
	}
	if len(rep.Stale) > 0 {
		return fmt.Errorf("eval: %d in-process servers did not answer: %v", len(rep.Stale), rep.Stale)
	}
	return nil
}

type inProcessUpstreams struct {
	ids     []string
	clients map[string]*client.Client
	info    map[string]upstream.ServerInfo
}

func newInProcessUpstreams(ctx context.Context, ds *Dataset) (*inProcessUpstreams, error) {
	u := &inProcessUpstreams{clients: map[string]*client.Client{}, info: map[string]upstream.ServerInfo{}}
	byServer := map[string][]catalog.Tool{}
	for _, t := range ds.Tools {
		byServer[t.Server] = append(byServer[t.Server], t)
	}
	for _, s := range ds.Servers {
		title := s.Title
		if title == "" {
			title = s.ID
		}
		srv := server.NewMCPServer(title, "1.0.0", server.WithToolCapabilities(false), server.WithInstructions(s.Description))
		for _, t := range byServer[s.ID] {
			tool := mcp.Tool{Name: t.Name, Title: t.Title, Description: t.Description, RawInputSchema: t.InputSchema}
			if len(t.InputSchema) == 0 || !json.Valid(t.InputSchema) {
				tool.RawInputSchema = json.RawMessage(`{"type":"object"}`)
			}
			srv.AddTool(tool, func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return mcp.NewToolResultText("ok"), nil
			})
		}
		c, err := client.NewInProcessClient(srv)
		if err != nil {
			u.close()
			return nil, err
		}
		if err := c.Start(ctx); err != nil {
			u.close()
			return nil, err
		}
		init := mcp.InitializeRequest{}
		init.Params.ProtocolVersion = mcp.LATEST_LEGACY_PROTOCOL_VERSION
		init.Params.ClientInfo = mcp.Implementation{Name: "toolrag-eval", Version: "1"}
		res, err := c.Initialize(ctx, init)
		if err != nil {
			u.close()
			return nil, fmt.Errorf("eval: initialize in-process server %q: %w", s.ID, err)
		}
		u.clients[s.ID] = c
		u.ids = append(u.ids, s.ID)
		u.info[s.ID] = upstream.ServerInfo{Name: res.ServerInfo.Name, Title: res.ServerInfo.Name, Version: res.ServerInfo.Version, Instructions: res.Instructions}
	}
	sort.Strings(u.ids)
	return u, nil
}

func (u *inProcessUpstreams) Servers() []string { return u.ids }

func (u *inProcessUpstreams) Info(_ context.Context, id string) (upstream.ServerInfo, error) {
	info, ok := u.info[id]
	if !ok {
		return info, upstream.ErrUnknownServer
	}
	return info, nil
}

func (u *inProcessUpstreams) ListTools(ctx context.Context, id string) ([]mcp.Tool, error) {
	c, ok := u.clients[id]
	if !ok {
		return nil, upstream.ErrUnknownServer
	}
	var out []mcp.Tool
	req := mcp.ListToolsRequest{}
	for {
		res, err := c.ListTools(ctx, req)
		if err != nil {
			return nil, err
		}
		out = append(out, res.Tools...)
		if res.NextCursor == "" {
			return out, nil
		}
		req.Params.Cursor = res.NextCursor
	}
}

func (u *inProcessUpstreams) close() {
	for _, c := range u.clients {
		c.Close()
	}
}
