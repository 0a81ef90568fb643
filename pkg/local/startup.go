package local

import (
	"context"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// defaultStartupWait bounds the wait of a retrieval for the first sync.
const defaultStartupWait = 20 * time.Second

// startupRetriever serves find_tools and /tool-rag/retrieve. While a
// gateway that started with an empty catalog runs its first sync, a
// retrieval waits for that sync (up to the startup wait, and to 1s before
// its own deadline) rather than answer "nothing found" from a catalog
// that is not there yet; past the wait it answers what there is, marked
// Loading.
type startupRetriever struct{ g *Gateway }

func (s startupRetriever) Retrieve(ctx context.Context, req retrieve.Request) (retrieve.Response, error) {
	loading := s.g.waitFirstSync(ctx)
	resp, err := s.g.Retriever.Retrieve(ctx, req)
	resp.Loading = loading
	return resp, err
}

// waitFirstSync waits for the first sync when one is running on an empty
// catalog and reports whether it is still running.
func (g *Gateway) waitFirstSync(ctx context.Context) (loading bool) {
	first := g.firstSync.Load()
	if first == nil {
		return false
	}
	wait := g.startupWait
	if dl, ok := ctx.Deadline(); ok {
		wait = min(wait, time.Until(dl)-time.Second)
	}
	if wait <= 0 {
		select {
		case <-*first:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-*first:
		return false
	case <-t.C:
		return true
	case <-ctx.Done():
		return true
	}
}
