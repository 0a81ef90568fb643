package catalog

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// Reader is the read side of a Store: what a Copy is taken from.
type Reader interface {
	ListTools(ctx context.Context) ([]Tool, error)
	ListServers(ctx context.Context) ([]Server, error)
	GetTool(ctx context.Context, id string) (Tool, error)
}

// Copy is an in-memory copy of a catalog. A gateway reads its store once
// per catalog change (Load, or Set from a copy published with the index)
// and hands the Copy to the retriever, the indexer, the MCP tool list and
// the REST API, so that they share one read instead of each reading the
// store. A Copy is safe for concurrent use.
type Copy struct {
	src Reader

	mu      sync.RWMutex
	tools   []Tool
	byID    map[string]int
	servers []Server
	loaded  bool
}

// NewCopy returns an empty Copy of src. Until Load or Set (and after
// Release), reads go to src itself; GetTool falls back to src for a tool
// added since the copy was taken.
func NewCopy(src Reader) *Copy { return &Copy{src: src} }

// Load replaces the copy with src's current content, reading the tools and
// the servers concurrently. On error the previous copy stays.
func (c *Copy) Load(ctx context.Context) error {
	var (
		servers []Server
		srvErr  error
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		servers, srvErr = c.src.ListServers(ctx)
	}()
	tools, err := c.src.ListTools(ctx)
	wg.Wait()
	if err = errors.Join(err, srvErr); err != nil {
		return fmt.Errorf("read the tool catalog: %w", err)
	}
	c.Set(tools, servers)
	return nil
}

// Set replaces the copy with tools and servers (the copy keeps them: the
// caller must not modify them afterwards).
func (c *Copy) Set(tools []Tool, servers []Server) {
	byID := make(map[string]int, len(tools))
	for i, t := range tools {
		byID[t.ID] = i
	}
	c.mu.Lock()
	c.tools, c.byID, c.servers, c.loaded = tools, byID, servers, true
	c.mu.Unlock()
}

// Release drops the copy; reads go to the source until the next Load or
// Set.
func (c *Copy) Release() {
	c.mu.Lock()
	c.tools, c.byID, c.servers, c.loaded = nil, nil, nil, false
	c.mu.Unlock()
}

// Len returns the number of tools in the copy.
func (c *Copy) Len() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.tools)
}

// Content returns the copy's tools and servers as they are (not cloned:
// read only) and whether the copy holds anything.
func (c *Copy) Content() ([]Tool, []Server, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.tools, c.servers, c.loaded
}

// ListTools returns the copy (a fresh slice; the records are shared).
func (c *Copy) ListTools(ctx context.Context) ([]Tool, error) {
	return listCopy(ctx, c, &c.tools, c.src.ListTools)
}

// ListServers returns the copy's servers.
func (c *Copy) ListServers(ctx context.Context) ([]Server, error) {
	return listCopy(ctx, c, &c.servers, c.src.ListServers)
}

// listCopy returns a clone of *list (c.tools or c.servers) or, while the
// copy holds nothing, what src returns.
func listCopy[T any](ctx context.Context, c *Copy, list *[]T, src func(context.Context) ([]T, error)) ([]T, error) {
	c.mu.RLock()
	out, loaded := slices.Clone(*list), c.loaded
	c.mu.RUnlock()
	if !loaded {
		return src(ctx)
	}
	return out, nil
}

// GetTool answers from the copy and falls back to the store for a tool
// added since it was taken.
func (c *Copy) GetTool(ctx context.Context, id string) (Tool, error) {
	c.mu.RLock()
	i, ok := c.byID[id]
	var t Tool
	if ok {
		t = c.tools[i]
	}
	c.mu.RUnlock()
	if ok {
		return t, nil
	}
	t, err := c.src.GetTool(ctx, id)
	if err != nil && !errors.Is(err, ErrNotFound) {
		return t, fmt.Errorf("tool %q: %w", id, err)
	}
	return t, err
}

// SharedTools returns r's tools as ListTools does, but without copying
// them when r is a loaded Copy: the slice is the Copy's own (clipped, so
// an append copies it), for callers that only read it, such as a cold
// start's indexes over 100k tools (a copy is ~24 MB of fresh memory).
func SharedTools(ctx context.Context, r interface {
	ListTools(context.Context) ([]Tool, error)
}) ([]Tool, error) {
	if c, ok := r.(*Copy); ok {
		c.mu.RLock()
		tools, loaded := c.tools, c.loaded
		c.mu.RUnlock()
		if loaded {
			return slices.Clip(tools), nil
		}
	}
	return r.ListTools(ctx)
}
