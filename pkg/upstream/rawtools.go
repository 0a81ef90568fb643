package upstream

import (
	"context"
	"encoding/json"
	"sync"
)

// mcp-go decodes a tools/list page into mcp.Tool, which keeps only the
// fields it knows and rewrites schemas (draft-07 definitions become $defs,
// unknown keywords are dropped). RawTools keeps each tool as the server
// sent it, so the catalog can serve every field unchanged.

// RawTools collects the tools of the tools/list pages answered to requests
// made with the context WithRawTools returned.
type RawTools struct {
	mu    sync.Mutex
	pages []json.RawMessage
}

type rawToolsKey struct{}

// WithRawTools returns a context whose tools/list answers (ListTools) are
// kept in the returned RawTools.
func WithRawTools(ctx context.Context) (context.Context, *RawTools) {
	r := &RawTools{}
	return context.WithValue(ctx, rawToolsKey{}, r), r
}

// capture keeps the result of one answered request made with ctx.
func captureRaw(ctx context.Context, result json.RawMessage) {
	r, _ := ctx.Value(rawToolsKey{}).(*RawTools)
	if r == nil || len(result) == 0 {
		return
	}
	r.mu.Lock()
	r.pages = append(r.pages, result)
	r.mu.Unlock()
}

// ByName returns every tool seen, by name, as the server sent it (the last
// one wins when a retried list sent a name twice).
func (r *RawTools) ByName() map[string]json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]json.RawMessage{}
	for _, p := range r.pages {
		var page struct {
			Tools []json.RawMessage `json:"tools"`
		}
		if json.Unmarshal(p, &page) != nil {
			continue
		}
		for _, t := range page.Tools {
			var head struct {
				Name string `json:"name"`
			}
			if json.Unmarshal(t, &head) == nil && head.Name != "" {
				out[head.Name] = t
			}
		}
	}
	return out
}
