package syncer

import (
	"context"
	"slices"

	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// Hooks are where a runtime's sync differs; Sync runs the steps in the
// same order on every runtime.
type Hooks struct {
	// Registry reads the servers to sync and configures the upstreams
	// with them (the AWS runtime's registry table); nil syncs the servers
	// the upstreams are configured with (the local runtime's files, which
	// it watches itself).
	Registry func(ctx context.Context) (map[string]upstream.ServerConfig, error)
	// Surfaces stores the prompts and resources of the servers whose
	// tools were just listed (servers that failed are not waited on
	// twice), returning the servers that failed, with why. Nil: the
	// runtime lists them when it applies the catalog. It needs Registry.
	Surfaces func(ctx context.Context, listable map[string]upstream.ServerConfig) map[string]string
	// Publish makes the new catalog current once the store holds it: the
	// index build and every consumer of the catalog. rep is what the sync
	// changed.
	Publish func(ctx context.Context, rep Report) error
}

// Outcome is what Sync did.
type Outcome struct {
	Sync Report
	// SurfaceErrors are the servers whose prompts and resources could not
	// be listed (Hooks.Surfaces), with why.
	SurfaceErrors map[string]string
}

// Sync is the one sync pipeline of every runtime: the registry
// (Hooks.Registry) → each upstream's tool list into cfg.Store (Run:
// unreachable servers are marked stale, never deleted) → their prompts and
// resources (Hooks.Surfaces) → the new catalog published (Hooks.Publish).
// It stops at the first step that fails and returns what was done.
func Sync(ctx context.Context, cfg Config, h Hooks) (Outcome, error) {
	var out Outcome
	var servers map[string]upstream.ServerConfig
	if h.Registry != nil {
		var err error
		if servers, err = h.Registry(ctx); err != nil {
			return out, err
		}
	}
	var err error
	if out.Sync, err = Run(ctx, cfg); err != nil {
		return out, err
	}
	if h.Surfaces != nil && servers != nil {
		listable := make(map[string]upstream.ServerConfig, len(servers))
		for id, c := range servers {
			// Servers a one-server sync (cfg.Servers) did not name keep
			// their stored prompts and resources.
			if _, stale := out.Sync.Stale[id]; !stale && (cfg.Servers == nil || slices.Contains(cfg.Servers, id)) {
				listable[id] = c
			}
		}
		out.SurfaceErrors = h.Surfaces(ctx, listable)
	}
	if h.Publish != nil {
		err = h.Publish(ctx, out.Sync)
	}
	return out, err
}
