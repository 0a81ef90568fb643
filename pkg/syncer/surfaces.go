// Surfaces: the upstreams' prompts, resources and resource templates
// carried from the sync step to the gateways through a store (on AWS, the
// registry table): SyncSurfaces lists them from the upstreams and stores
// them; StoredSurfaces reads them back as the gateway's
// gateway.SurfaceSource.

package syncer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"golang.org/x/sync/errgroup"

	"github.com/toolrag/mcp-gateway/pkg/gateway"
	"github.com/toolrag/mcp-gateway/pkg/upstream"
)

// The prompts and resources of every upstream are listed by the sync
// function and stored on the server's registry item (dynamo
// RegistryStore.SetSurface); gateways build their MCP surface from what is stored and
// never list an upstream themselves, so that neither a cold start nor a
// catalog reload inside a user's request waits on a server that does not
// answer.

// SurfaceWriter stores a server's surface document (dynamo.RegistryStore).
type SurfaceWriter interface {
	SetSurface(ctx context.Context, id string, doc json.RawMessage) error
}

// SurfaceReader returns every stored surface document by server id
// (dynamo.RegistryStore).
type SurfaceReader interface {
	Surfaces(ctx context.Context) (map[string]json.RawMessage, error)
}

// surfaceDoc is the stored document.
type surfaceDoc struct {
	gateway.Surface
	ListedAt time.Time `json:"listed_at"`
}

// SyncSurfaces lists the prompts, resources and resource templates of
// every server (misconfigured ones excepted), at most parallel at once,
// each bounded by timeout, and stores them. A server that cannot be listed
// keeps what was stored before. It returns the servers that failed, with
// why.
func SyncSurfaces(ctx context.Context, up *upstream.Manager, reg SurfaceWriter, servers map[string]upstream.ServerConfig,
	parallel int, timeout time.Duration, log *slog.Logger) map[string]string {
	if parallel <= 0 {
		parallel = 8
	}
	ids := make([]string, 0, len(servers))
	for id, cfg := range servers {
		if !strings.HasPrefix(cfg.Transport, "(invalid") {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	var (
		mu     sync.Mutex
		failed = map[string]string{}
		g      errgroup.Group // a server that cannot be listed stops no other
	)
	g.SetLimit(parallel)
	for _, id := range ids {
		g.Go(func() error {
			if err := syncSurface(ctx, up, reg, id, timeout); err != nil {
				log.Warn("could not list prompts/resources; gateways keep the ones stored before", "server", id, "error", err)
				mu.Lock()
				failed[id] = err.Error()
				mu.Unlock()
			}
			return nil
		})
	}
	g.Wait()
	return failed
}

func syncSurface(ctx context.Context, up *upstream.Manager, reg SurfaceWriter, id string, timeout time.Duration) error {
	lctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var doc surfaceDoc
	var errs []error
	var err error
	if doc.Prompts, err = up.ListPrompts(lctx, id); err != nil && !unsupported(err) {
		errs = append(errs, err)
	}
	if doc.Resources, err = up.ListResources(lctx, id); err != nil && !unsupported(err) {
		errs = append(errs, err)
	}
	if doc.Templates, err = up.ListResourceTemplates(lctx, id); err != nil && !unsupported(err) {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	doc.ListedAt = time.Now().UTC()
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("encode the surface: %w", err)
	}
	return reg.SetSurface(ctx, id, raw)
}

// unsupported reports an upstream that does not offer prompts or
// resources at all (not an error: it has none).
func unsupported(err error) bool {
	if errors.Is(err, mcp.ErrMethodNotFound) {
		return true
	}
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "method not found") || strings.Contains(s, "not supported") || strings.Contains(s, "does not support")
}

// StoredSurfaces is the gateway's gateway.SurfaceSource: the registry's
// stored surfaces, read with the registry on each catalog reload. Servers
// the health function marked down show no prompts or resources, as their
// tools are withheld from find_tools (retrieve.Config.ServerUp).
type StoredSurfaces struct {
	mu   sync.RWMutex
	docs map[string]gateway.Surface
	raw  map[string]json.RawMessage
	// down are the servers marked down; downDirty says that they changed
	// since the surface was last built from them.
	down      map[string]bool
	downDirty bool
}

// SetDown records the servers marked down (ids sorted) and reports whether
// the set changed; the next Load then reports a change, so that the MCP
// surface is rebuilt without them (or with them again).
func (s *StoredSurfaces) SetDown(ids []string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(ids) == len(s.down) {
		same := true
		for _, id := range ids {
			if !s.down[id] {
				same = false
				break
			}
		}
		if same {
			return false
		}
	}
	s.down = make(map[string]bool, len(ids))
	for _, id := range ids {
		s.down[id] = true
	}
	s.downDirty = true
	return true
}

// Load re-reads the stored surfaces and reports whether they changed; a
// damaged document is logged and that server shows none.
func (s *StoredSurfaces) Load(ctx context.Context, reg SurfaceReader, log *slog.Logger) (changed bool, err error) {
	raw, err := reg.Surfaces(ctx)
	if err != nil {
		return false, fmt.Errorf("read the stored prompts and resources: %w", err)
	}
	s.mu.RLock()
	same := len(raw) == len(s.raw) && s.raw != nil
	for id, r := range raw {
		if same && !bytes.Equal(r, s.raw[id]) {
			same = false
		}
	}
	dirty := s.downDirty
	s.mu.RUnlock()
	if same {
		if dirty {
			s.mu.Lock()
			s.downDirty = false
			s.mu.Unlock()
		}
		return dirty, nil
	}
	docs := make(map[string]gateway.Surface, len(raw))
	for id, r := range raw {
		var d surfaceDoc
		if err := json.Unmarshal(r, &d); err != nil {
			log.Error("stored prompts/resources do not decode; the server shows none until the next sync", "server", id, "error", err)
			continue
		}
		docs[id] = d.Surface
	}
	s.mu.Lock()
	s.docs, s.raw, s.downDirty = docs, raw, false
	s.mu.Unlock()
	return true, nil
}

// Surface implements gateway.SurfaceSource.
func (s *StoredSurfaces) Surface(_ context.Context, server string) (gateway.Surface, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.down[server] {
		return gateway.Surface{}, false, nil
	}
	d, ok := s.docs[server]
	return d, ok, nil
}
