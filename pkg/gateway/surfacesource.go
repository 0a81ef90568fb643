package gateway

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
)

// Surface is one upstream's prompts, resources and resource templates.
type Surface struct {
	Prompts   []mcp.Prompt           `json:"prompts,omitempty"`
	Resources []mcp.Resource         `json:"resources,omitempty"`
	Templates []mcp.ResourceTemplate `json:"resource_templates,omitempty"`
}

// SurfaceSource supplies upstream surfaces stored elsewhere (on AWS, the
// registry table, where the sync function writes what it listed), so
// that Reload contacts no upstream: a cold start and a catalog reload
// never wait on a server that does not answer. ok is false for a server
// with nothing stored, which then shows no prompts or resources.
type SurfaceSource interface {
	Surface(ctx context.Context, server string) (s Surface, ok bool, err error)
}

// storedSurface reads one server's surface from the SurfaceSource.
func (g *Server) storedSurface(ctx context.Context, id string) (serverSurface, error) {
	s, _, err := g.cfg.Surfaces.Surface(ctx, id)
	return serverSurface{prompts: s.Prompts, resources: s.Resources, templates: s.Templates}, err
}
