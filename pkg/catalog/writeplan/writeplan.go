// Package writeplan holds the catalog-store logic shared by the SQLite and
// DynamoDB implementations: checking and normalizing the input of
// ReplaceServerTools, and working out which tools it writes, keeps and
// deletes. Sharing it keeps the two stores' answers identical.
package writeplan

import (
	"fmt"
	"sort"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Prepare checks the input of ReplaceServerTools and returns normalized
// copies: the server id is valid, every tool belongs to it (an empty
// Tool.Server is filled in), names are non-empty and unique, derived fields
// are filled by catalog.Finalize, Status is active and a zero UpdatedAt
// becomes now. The server's Status becomes active and LastError empty. The
// tools come back sorted by ID. Nothing in the input is modified.
func Prepare(srv catalog.Server, tools []catalog.Tool, now time.Time) (catalog.Server, []catalog.Tool, error) {
	if err := catalog.ValidServerID(srv.ID); err != nil {
		return srv, nil, err
	}
	srv.Status = catalog.StatusActive
	srv.LastError = ""
	if srv.SyncedAt.IsZero() {
		srv.SyncedAt = now
	}
	out := make([]catalog.Tool, 0, len(tools))
	seen := make(map[string]bool, len(tools))
	for i, t := range tools {
		if t.Server == "" {
			t.Server = srv.ID
		}
		if t.Server != srv.ID {
			return srv, nil, fmt.Errorf("tool %q (#%d) belongs to server %q, not %q", t.Name, i, t.Server, srv.ID)
		}
		if t.Name == "" {
			return srv, nil, fmt.Errorf("tool #%d of server %q has no name", i, srv.ID)
		}
		id := catalog.ToolID(srv.ID, t.Name)
		if t.ID != "" && t.ID != id {
			return srv, nil, fmt.Errorf("tool %q of server %q has id %q, want %q", t.Name, srv.ID, t.ID, id)
		}
		if seen[t.Name] {
			return srv, nil, fmt.Errorf("server %q lists tool %q twice", srv.ID, t.Name)
		}
		seen[t.Name] = true
		t.ID = id
		t.Tags = append([]string(nil), t.Tags...)
		t.Status = catalog.StatusActive
		catalog.Finalize(&t)
		if t.UpdatedAt.IsZero() {
			t.UpdatedAt = now
		}
		out = append(out, t)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return srv, out, nil
}

// Current is what a store holds about one tool before a replace.
type Current struct {
	ContentHash string
	Stale       bool // the stored status is stale
}

// Result is the outcome of Diff.
type Result struct {
	Write      []catalog.Tool // new or changed tools, to be written (sorted by ID)
	Reactivate []string       // unchanged tools whose status returns to active
	Keep       []string       // unchanged, already active tools
	Delete     []string       // sorted ids to delete
	Changed    []string       // sorted: Write ids plus Reactivate ids
}

// Diff compares the stored tools of a server (by id) with the prepared new
// list. A tool is written when it is new or its ContentHash differs;
// unchanged tools that are stale are reactivated; stored tools not in the
// list are deleted.
func Diff(current map[string]Current, next []catalog.Tool) Result {
	var r Result
	inNext := make(map[string]bool, len(next))
	for _, t := range next {
		inNext[t.ID] = true
		cur, ok := current[t.ID]
		switch {
		case !ok || cur.ContentHash != t.ContentHash:
			r.Write = append(r.Write, t)
			r.Changed = append(r.Changed, t.ID)
		case cur.Stale:
			r.Reactivate = append(r.Reactivate, t.ID)
			r.Changed = append(r.Changed, t.ID)
		default:
			r.Keep = append(r.Keep, t.ID)
		}
	}
	for id := range current {
		if !inNext[id] {
			r.Delete = append(r.Delete, id)
		}
	}
	sort.Strings(r.Changed)
	sort.Strings(r.Delete)
	return r
}
