package awsrt

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// toolReader is the part of the tools table the gateway reads
// (dynamo.ToolStore).
type toolReader interface {
	ListTools(ctx context.Context) ([]catalog.Tool, error)
	ListServers(ctx context.Context) ([]catalog.Server, error)
	GetTool(ctx context.Context, id string) (catalog.Tool, error)
}

// snapshot is an in-memory copy of the tools table. The gateway never
// writes the catalog; it reads the whole table once at cold start and again
// when a new index is published (or the copy is older than CatalogMaxAge),
// so that the retriever, the MCP tool list and the REST API share one scan
// instead of each scanning the table.
type snapshot struct {
	store toolReader

	mu      sync.RWMutex
	tools   []catalog.Tool
	byID    map[string]int
	servers []catalog.Server
	loaded  bool
}

// load replaces the copy with the table's current content, reading the
// tools and the servers concurrently. On error the previous copy stays.
func (s *snapshot) load(ctx context.Context) error {
	var (
		servers []catalog.Server
		srvErr  error
		wg      sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		servers, srvErr = s.store.ListServers(ctx)
	}()
	tools, err := s.store.ListTools(ctx)
	wg.Wait()
	if err != nil {
		return err
	}
	if srvErr != nil {
		return srvErr
	}
	s.set(tools, servers)
	return nil
}

// set replaces the copy.
func (s *snapshot) set(tools []catalog.Tool, servers []catalog.Server) {
	byID := make(map[string]int, len(tools))
	for i, t := range tools {
		byID[t.ID] = i
	}
	s.mu.Lock()
	s.tools, s.byID, s.servers, s.loaded = tools, byID, servers, true
	s.mu.Unlock()
}

// release drops the copy; reads fail until the next load or set.
func (s *snapshot) release() {
	s.mu.Lock()
	s.tools, s.byID, s.servers, s.loaded = nil, nil, nil, false
	s.mu.Unlock()
}

func (s *snapshot) len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tools)
}

// ListTools returns the copy (a fresh slice; the records are shared).
func (s *snapshot) ListTools(ctx context.Context) ([]catalog.Tool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.loaded {
		return nil, errors.New("the tool catalog has not been read from DynamoDB yet")
	}
	return slices.Clone(s.tools), nil
}

// ListServers returns the copy's servers.
func (s *snapshot) ListServers(ctx context.Context) ([]catalog.Server, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.loaded {
		return nil, errors.New("the tool catalog has not been read from DynamoDB yet")
	}
	return slices.Clone(s.servers), nil
}

// GetTool answers from the copy and falls back to the table for a tool
// added since it was taken.
func (s *snapshot) GetTool(ctx context.Context, id string) (catalog.Tool, error) {
	s.mu.RLock()
	i, ok := s.byID[id]
	var t catalog.Tool
	if ok {
		t = s.tools[i]
	}
	s.mu.RUnlock()
	if ok {
		return t, nil
	}
	t, err := s.store.GetTool(ctx, id)
	if err != nil && !errors.Is(err, catalog.ErrNotFound) {
		return t, fmt.Errorf("tool %q: %w", id, err)
	}
	return t, err
}
