package mcpfix

import (
	"context"
	"encoding/json"
	"sync"
)

// mcp-go decodes a list page (tools/list, prompts/list, resources/list,
// resources/templates/list) into its own types, which keep only the fields
// they know and rewrite schemas (draft-07 definitions become $defs, unknown
// keywords are dropped). RawResults keeps each item as the server sent it,
// so the catalog (pkg/syncer) and the bridge can serve every field
// unchanged. pkg/upstream's transports call CaptureRaw.

// RawResults collects the results answered to requests made with the
// context WithRawResults returned.
type RawResults struct {
	mu    sync.Mutex
	pages []json.RawMessage
}

type rawResultsKey struct{}

// WithRawResults returns a context whose answered requests (ListTools,
// ListPrompts, ... with every page) keep their results in the returned
// RawResults.
func WithRawResults(ctx context.Context) (context.Context, *RawResults) {
	r := &RawResults{}
	return context.WithValue(ctx, rawResultsKey{}, r), r
}

// CaptureRaw keeps the result of one answered request made with ctx (the
// client's transport calls it with each result it reads).
func CaptureRaw(ctx context.Context, result json.RawMessage) {
	r, _ := ctx.Value(rawResultsKey{}).(*RawResults)
	if r == nil || len(result) == 0 {
		return
	}
	r.mu.Lock()
	r.pages = append(r.pages, result)
	r.mu.Unlock()
}

// Items returns every item seen in the results' member (e.g. "tools"), by
// its key member (e.g. "name"), as the server sent it; the last one wins
// when a retried list sent a key twice.
func (r *RawResults) Items(member, key string) map[string]json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]json.RawMessage{}
	for _, p := range r.pages {
		var page map[string]json.RawMessage
		if json.Unmarshal(p, &page) != nil {
			continue
		}
		var items []json.RawMessage
		if json.Unmarshal(page[member], &items) != nil {
			continue
		}
		for _, it := range items {
			var head map[string]json.RawMessage
			var k string
			if json.Unmarshal(it, &head) == nil && json.Unmarshal(head[key], &k) == nil && k != "" {
				out[k] = it
			}
		}
	}
	return out
}

// Tools returns every tool seen, by name, as the server sent it.
func (r *RawResults) Tools() map[string]json.RawMessage { return r.Items("tools", "name") }

// Last returns the last result kept (nil when none was).
func (r *RawResults) Last() json.RawMessage {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.pages) == 0 {
		return nil
	}
	return r.pages[len(r.pages)-1]
}
