// Package storetest is the conformance suite for catalog.Store
// implementations. Every implementation runs it from its own tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) catalog.Store { return openEmptyStore(t) })
//	}
//
// newStore must return an empty store; the suite closes it.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Run exercises every method of catalog.Store against stores made by newStore.
func Run(t *testing.T, newStore func(t *testing.T) catalog.Store) {
	open := func(t *testing.T) catalog.Store {
		t.Helper()
		return closeAtEnd(t, newStore(t))
	}
	tests := []struct {
		name string
		fn   func(t *testing.T, s catalog.Store)
	}{
		{"Empty", testEmpty},
		{"ReplaceNew", testReplaceNew},
		{"ReplaceDiff", testReplaceDiff},
		{"ReplaceEmptyList", testReplaceEmptyList},
		{"StaleAndRecover", testStaleAndRecover},
		{"StaleUnknownServer", testStaleUnknownServer},
		{"DeleteServer", testDeleteServer},
		{"SeparatorInToolName", testSeparatorInToolName},
		{"Unicode", testUnicode},
		{"BadInputLosesNothing", testBadInput},
		{"LargeServer", testLargeServer},
		{"ConcurrentServers", testConcurrentServers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, open(t))
		})
	}
}

// closeAtEnd closes s when tb ends and fails tb if that fails.
func closeAtEnd(tb testing.TB, s catalog.Store) catalog.Store {
	tb.Cleanup(func() {
		if err := s.Close(); err != nil {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// Tool builds a finalized tool record for tests.
func Tool(server, name, description string) catalog.Tool {
	t := catalog.Tool{
		Server:      server,
		Name:        name,
		Title:       "Title of " + name,
		Description: description,
		InputSchema: json.RawMessage(`{"type":"object","properties":{"q":{"type":"string","description":"query"}},"required":["q"]}`),
		Annotations: json.RawMessage(`{"readOnlyHint":true}`),
		Tags:        []string{"t1", "t2"},
	}
	catalog.Finalize(&t)
	return t
}

// Tools builds n tools named prefix000, prefix001, ...
func Tools(server, prefix string, n int, description string) []catalog.Tool {
	out := make([]catalog.Tool, n)
	for i := range out {
		out[i] = Tool(server, fmt.Sprintf("%s%03d", prefix, i), fmt.Sprintf("%s %d", description, i))
	}
	return out
}

func srv(id string) catalog.Server {
	return catalog.Server{ID: id, Title: "Server " + id, Description: "about " + id, SyncedAt: time.Now().UTC().Truncate(time.Millisecond)}
}

func ids(tools []catalog.Tool) []string {
	out := make([]string, len(tools))
	for i, t := range tools {
		out[i] = t.ID
	}
	return out
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	sort.Strings(out)
	return out
}

func replace(t *testing.T, s catalog.Store, server catalog.Server, tools []catalog.Tool) (changed, deleted []string) {
	t.Helper()
	changed, deleted, err := s.ReplaceServerTools(context.Background(), server, tools)
	if err != nil {
		t.Fatalf("ReplaceServerTools(%s, %d tools): %v", server.ID, len(tools), err)
	}
	return changed, deleted
}

func listTools(t *testing.T, s catalog.Store) []catalog.Tool {
	t.Helper()
	return listByID(t, "ListTools", s.ListTools, func(x catalog.Tool) string { return x.ID })
}

func listServers(t *testing.T, s catalog.Store) []catalog.Server {
	t.Helper()
	return listByID(t, "ListServers", s.ListServers, func(x catalog.Server) string { return x.ID })
}

// listByID returns what list (the store's method named name) returns,
// and fails the test on an error or a list not sorted by id.
func listByID[T any](t *testing.T, name string, list func(context.Context) ([]T, error), id func(T) string) []T {
	t.Helper()
	items, err := list(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	keys := make([]string, len(items))
	for i, x := range items {
		keys[i] = id(x)
	}
	if !slices.IsSorted(keys) {
		t.Fatalf("%s is not sorted by ID: %v", name, keys)
	}
	return items
}

func toolsOf(tools []catalog.Tool, server string) []catalog.Tool {
	var out []catalog.Tool
	for _, t := range tools {
		if t.Server == server {
			out = append(out, t)
		}
	}
	return out
}

func equalStrings(t *testing.T, what string, got, want []string) {
	t.Helper()
	if len(got) == 0 && len(want) == 0 {
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s = %v, want %v", what, got, want)
	}
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return string(a) == string(b)
	}
	return reflect.DeepEqual(va, vb)
}

// sameTool compares everything the store must round-trip except Status and
// UpdatedAt.
func sameTool(t *testing.T, got, want catalog.Tool) {
	t.Helper()
	if got.ID != want.ID || got.Server != want.Server || got.Name != want.Name || got.Title != want.Title ||
		got.Description != want.Description || got.ToolType != want.ToolType ||
		got.PermissionScope != want.PermissionScope || got.ContentHash != want.ContentHash ||
		!jsonEqual(got.InputSchema, want.InputSchema) || !jsonEqual(got.Annotations, want.Annotations) ||
		!reflect.DeepEqual(sorted(got.Tags), sorted(want.Tags)) {
		t.Fatalf("tool round trip:\n got %+v\nwant %+v", got, want)
	}
	if catalog.ContentHash(got) != want.ContentHash {
		t.Fatalf("tool %s read back hashes to %s, stored hash %s", got.ID, catalog.ContentHash(got), want.ContentHash)
	}
}

func wantStatus(t *testing.T, tools []catalog.Tool, status string) {
	t.Helper()
	for _, tool := range tools {
		if tool.Status != status {
			t.Fatalf("tool %s status %q, want %q", tool.ID, tool.Status, status)
		}
	}
}

func server(t *testing.T, s catalog.Store, id string) (catalog.Server, bool) {
	t.Helper()
	for _, sv := range listServers(t, s) {
		if sv.ID == id {
			return sv, true
		}
	}
	return catalog.Server{}, false
}

func testEmpty(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	if got := listTools(t, s); len(got) != 0 {
		t.Fatalf("empty store lists %d tools", len(got))
	}
	if got := listServers(t, s); len(got) != 0 {
		t.Fatalf("empty store lists %d servers", len(got))
	}
	for _, id := range []string{"a__b", "nosep", "", "__x"} {
		if _, err := s.GetTool(ctx, id); !errors.Is(err, catalog.ErrNotFound) {
			t.Fatalf("GetTool(%q) on empty store: err = %v, want ErrNotFound", id, err)
		}
	}
	if err := s.DeleteServer(ctx, "ghost"); err != nil {
		t.Fatalf("DeleteServer of an unknown server should be a no-op, got %v", err)
	}
}

func testReplaceNew(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	tools := []catalog.Tool{Tool("alpha", "search_docs", "Search the docs"), Tool("alpha", "delete_doc", "Delete a doc"), Tool("alpha", "get_doc", "Fetch one doc")}
	sv := srv("alpha")
	changed, deleted := replace(t, s, sv, tools)
	equalStrings(t, "changed", changed, sorted(ids(tools)))
	equalStrings(t, "deleted", deleted, nil)

	got := listTools(t, s)
	if len(got) != 3 {
		t.Fatalf("ListTools = %v, want 3 tools", ids(got))
	}
	byID := map[string]catalog.Tool{}
	for _, tool := range tools {
		byID[tool.ID] = tool
	}
	for _, g := range got {
		sameTool(t, g, byID[g.ID])
		if g.UpdatedAt.IsZero() {
			t.Fatalf("tool %s has no UpdatedAt", g.ID)
		}
	}
	wantStatus(t, got, catalog.StatusActive)

	one, err := s.GetTool(ctx, "alpha__get_doc")
	if err != nil {
		t.Fatalf("GetTool: %v", err)
	}
	sameTool(t, one, byID["alpha__get_doc"])
	if one.Status != catalog.StatusActive {
		t.Fatalf("GetTool status %q", one.Status)
	}
	if _, err := s.GetTool(ctx, "alpha__nope"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("GetTool(missing) err = %v, want ErrNotFound", err)
	}
	if _, err := s.GetTool(ctx, "beta__get_doc"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("GetTool(other server) err = %v, want ErrNotFound", err)
	}

	servers := listServers(t, s)
	if len(servers) != 1 {
		t.Fatalf("ListServers = %+v", servers)
	}
	g := servers[0]
	if g.ID != sv.ID || g.Title != sv.Title || g.Description != sv.Description || g.Status != catalog.StatusActive || g.LastError != "" {
		t.Fatalf("server round trip: got %+v want %+v (status active)", g, sv)
	}
	if !g.SyncedAt.Equal(sv.SyncedAt) {
		t.Fatalf("server SyncedAt = %v, want %v", g.SyncedAt, sv.SyncedAt)
	}

	// Same list again: nothing changes.
	changed, deleted = replace(t, s, sv, tools)
	equalStrings(t, "changed on identical replace", changed, nil)
	equalStrings(t, "deleted on identical replace", deleted, nil)
}

func testReplaceDiff(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	a := Tool("alpha", "keep", "unchanged tool")
	b := Tool("alpha", "edit", "old description")
	c := Tool("alpha", "drop", "removed next time")
	other := Tool("beta", "keep", "other server")
	replace(t, s, srv("alpha"), []catalog.Tool{a, b, c})
	replace(t, s, srv("beta"), []catalog.Tool{other})
	before, err := s.GetTool(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}

	b2 := Tool("alpha", "edit", "new description")
	d := Tool("alpha", "fresh", "added")
	changed, deleted := replace(t, s, srv("alpha"), []catalog.Tool{d, a, b2})
	equalStrings(t, "changed", changed, sorted([]string{b2.ID, d.ID}))
	equalStrings(t, "deleted", deleted, []string{c.ID})

	got := listTools(t, s)
	equalStrings(t, "ListTools", ids(got), sorted([]string{a.ID, b2.ID, d.ID, other.ID}))
	edited, err := s.GetTool(ctx, b2.ID)
	if err != nil {
		t.Fatal(err)
	}
	sameTool(t, edited, b2)
	after, err := s.GetTool(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !after.UpdatedAt.Equal(before.UpdatedAt) {
		t.Fatalf("unchanged tool's UpdatedAt moved from %v to %v", before.UpdatedAt, after.UpdatedAt)
	}
	if _, err := s.GetTool(ctx, c.ID); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("removed tool still readable: %v", err)
	}
	// The schema alone changing is a change too.
	a2 := a
	a2.InputSchema = json.RawMessage(`{"type":"object","properties":{"q":{"type":"integer"}}}`)
	catalog.Finalize(&a2)
	changed, deleted = replace(t, s, srv("alpha"), []catalog.Tool{d, a2, b2})
	equalStrings(t, "changed after schema edit", changed, []string{a.ID})
	equalStrings(t, "deleted after schema edit", deleted, nil)
}

func testReplaceEmptyList(t *testing.T, s catalog.Store) {
	replace(t, s, srv("alpha"), Tools("alpha", "t", 3, "tool"))
	changed, deleted := replace(t, s, srv("alpha"), nil)
	equalStrings(t, "changed", changed, nil)
	equalStrings(t, "deleted", deleted, []string{"alpha__t000", "alpha__t001", "alpha__t002"})
	if got := listTools(t, s); len(got) != 0 {
		t.Fatalf("tools left: %v", ids(got))
	}
	if _, ok := server(t, s, "alpha"); !ok {
		t.Fatal("a server with no tools must still be listed")
	}
	// A new server with no tools is recorded as well.
	replace(t, s, srv("empty"), nil)
	if sv, ok := server(t, s, "empty"); !ok || sv.Status != catalog.StatusActive {
		t.Fatalf("empty server: %+v %v", sv, ok)
	}
}

func testStaleAndRecover(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	alpha := Tools("alpha", "a", 4, "alpha tool")
	beta := Tools("beta", "b", 2, "beta tool")
	replace(t, s, srv("alpha"), alpha)
	replace(t, s, srv("beta"), beta)

	for i := 0; i < 2; i++ { // marking twice is fine
		if err := s.MarkServerStale(ctx, "alpha", "upstream \"alpha\" did not answer initialize within 5s"); err != nil {
			t.Fatalf("MarkServerStale: %v", err)
		}
	}
	got := listTools(t, s)
	if len(got) != 6 {
		t.Fatalf("stale marking lost tools: %v", ids(got))
	}
	wantStatus(t, toolsOf(got, "alpha"), catalog.StatusStale)
	wantStatus(t, toolsOf(got, "beta"), catalog.StatusActive)
	for _, want := range alpha {
		g, err := s.GetTool(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameTool(t, g, want)
		if g.Status != catalog.StatusStale {
			t.Fatalf("GetTool(%s).Status = %q, want stale", g.ID, g.Status)
		}
	}
	sv, _ := server(t, s, "alpha")
	if sv.Status != catalog.StatusStale || sv.LastError != "upstream \"alpha\" did not answer initialize within 5s" {
		t.Fatalf("stale server record: %+v", sv)
	}
	if sv.Title != "Server alpha" {
		t.Fatalf("MarkServerStale lost the server title: %+v", sv)
	}
	if b, _ := server(t, s, "beta"); b.Status != catalog.StatusActive {
		t.Fatalf("other server marked: %+v", b)
	}

	// The next successful sync with the same tools flips every status back
	// and reports them as changed.
	changed, deleted := replace(t, s, srv("alpha"), alpha)
	equalStrings(t, "changed after recovery", changed, sorted(ids(alpha)))
	equalStrings(t, "deleted after recovery", deleted, nil)
	wantStatus(t, listTools(t, s), catalog.StatusActive)
	sv, _ = server(t, s, "alpha")
	if sv.Status != catalog.StatusActive || sv.LastError != "" {
		t.Fatalf("recovered server record: %+v", sv)
	}
	changed, _ = replace(t, s, srv("alpha"), alpha)
	equalStrings(t, "changed on the sync after recovery", changed, nil)
}

func testStaleUnknownServer(t *testing.T, s catalog.Store) {
	if err := s.MarkServerStale(context.Background(), "never-synced", "connection refused"); err != nil {
		t.Fatalf("MarkServerStale(unknown): %v", err)
	}
	sv, ok := server(t, s, "never-synced")
	if !ok || sv.Status != catalog.StatusStale || sv.LastError != "connection refused" {
		t.Fatalf("a server that never synced is recorded as stale with its error, got %+v %v", sv, ok)
	}
	if got := listTools(t, s); len(got) != 0 {
		t.Fatalf("tools appeared: %v", ids(got))
	}
	changed, _ := replace(t, s, srv("never-synced"), Tools("never-synced", "x", 2, "tool"))
	equalStrings(t, "changed", changed, []string{"never-synced__x000", "never-synced__x001"})
}

func testDeleteServer(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	replace(t, s, srv("alpha"), Tools("alpha", "a", 3, "alpha"))
	replace(t, s, srv("alphabet"), Tools("alphabet", "a", 2, "prefix sibling"))
	replace(t, s, srv("beta"), Tools("beta", "b", 2, "beta"))
	if err := s.MarkServerStale(ctx, "beta", "down"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteServer(ctx, "alpha"); err != nil {
		t.Fatalf("DeleteServer: %v", err)
	}
	equalStrings(t, "ListTools after delete", ids(listTools(t, s)),
		[]string{"alphabet__a000", "alphabet__a001", "beta__b000", "beta__b001"})
	var names []string
	for _, sv := range listServers(t, s) {
		names = append(names, sv.ID)
	}
	equalStrings(t, "ListServers after delete", names, []string{"alphabet", "beta"})
	if _, err := s.GetTool(ctx, "alpha__a000"); !errors.Is(err, catalog.ErrNotFound) {
		t.Fatalf("GetTool of a deleted server's tool: %v", err)
	}
	if err := s.DeleteServer(ctx, "alpha"); err != nil {
		t.Fatalf("second DeleteServer: %v", err)
	}
	// Deleting a stale server works too, and a deleted server can come back.
	if err := s.DeleteServer(ctx, "beta"); err != nil {
		t.Fatal(err)
	}
	changed, deleted := replace(t, s, srv("alpha"), Tools("alpha", "a", 1, "alpha again"))
	equalStrings(t, "changed on re-add", changed, []string{"alpha__a000"})
	equalStrings(t, "deleted on re-add", deleted, nil)
	equalStrings(t, "ListTools after re-add", ids(listTools(t, s)), []string{"alpha__a000", "alphabet__a000", "alphabet__a001"})
}

func testSeparatorInToolName(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	tools := []catalog.Tool{Tool("gh", "repos__list", "List repositories"), Tool("gh", "repos", "Repos"), Tool("gh", "repos__list__all", "Everything")}
	changed, _ := replace(t, s, srv("gh"), tools)
	equalStrings(t, "changed", changed, []string{"gh__repos", "gh__repos__list", "gh__repos__list__all"})
	for _, want := range tools {
		got, err := s.GetTool(ctx, want.ID)
		if err != nil {
			t.Fatalf("GetTool(%q): %v", want.ID, err)
		}
		sameTool(t, got, want)
		if got.Name != want.Name || got.Server != "gh" {
			t.Fatalf("split of %q: server %q name %q", want.ID, got.Server, got.Name)
		}
	}
	_, deleted := replace(t, s, srv("gh"), tools[:1])
	equalStrings(t, "deleted", deleted, []string{"gh__repos", "gh__repos__list__all"})
}

func testUnicode(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	tools := []catalog.Tool{
		Tool("intl", "wetter", "Ruft das Wetter für Köln ab — 天気を取得 🌦️"),
		Tool("intl", "quote", "Quotes \"text\" with 'marks', back\\slashes, tabs\tand\nnewlines, NUL-free; ∑ ∞ ≠ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢"),
		Tool("intl", "schema", "schema with unicode"),
	}
	tools[2].InputSchema = json.RawMessage(`{"type":"object","properties":{"städte":{"type":"string","description":"Städte — 都市"}}}`)
	tools[2].Title = "Überschrift ✓"
	catalog.Finalize(&tools[2])
	replace(t, s, srv("intl"), tools)
	for _, want := range tools {
		got, err := s.GetTool(ctx, want.ID)
		if err != nil {
			t.Fatal(err)
		}
		sameTool(t, got, want)
	}
	changed, _ := replace(t, s, srv("intl"), tools)
	equalStrings(t, "changed on identical unicode replace", changed, nil)
}

func testBadInput(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	good := Tools("alpha", "a", 3, "alpha")
	replace(t, s, srv("alpha"), good)
	before := listTools(t, s)

	mismatch := Tool("beta", "x", "belongs to beta")
	dupes := []catalog.Tool{good[0], good[0]}
	noName := catalog.Tool{Server: "alpha", Description: "no name"}
	cases := []struct {
		name  string
		srv   catalog.Server
		tools []catalog.Tool
	}{
		{"invalid server id", catalog.Server{ID: "bad id"}, nil},
		{"server id with separator", catalog.Server{ID: "a__b"}, nil},
		{"empty server id", catalog.Server{}, nil},
		{"tool of another server", srv("alpha"), append(slices.Clone(good), mismatch)},
		{"duplicate tool names", srv("alpha"), dupes},
		{"tool without name", srv("alpha"), []catalog.Tool{noName}},
	}
	for _, c := range cases {
		if _, _, err := s.ReplaceServerTools(ctx, c.srv, c.tools); err == nil {
			t.Errorf("ReplaceServerTools with %s: no error", c.name)
		}
	}
	after := listTools(t, s)
	equalStrings(t, "tools after rejected input", ids(after), ids(before))
	for i := range after {
		sameTool(t, after[i], before[i])
	}
	if err := s.MarkServerStale(ctx, "bad id", "x"); err == nil {
		t.Error("MarkServerStale with an invalid id: no error")
	}

	// Tools whose derived fields are left empty are finalized by the store.
	raw := catalog.Tool{Server: "alpha", Name: "raw_tool", Description: "not finalized"}
	changed, _ := replace(t, s, srv("alpha"), append(slices.Clone(good), raw))
	equalStrings(t, "changed", changed, []string{"alpha__raw_tool"})
	got, err := s.GetTool(ctx, "alpha__raw_tool")
	if err != nil {
		t.Fatal(err)
	}
	want := raw
	catalog.Finalize(&want)
	sameTool(t, got, want)
}

func testLargeServer(t *testing.T, s catalog.Store) {
	ctx := context.Background()
	big := Tools("big", "tool", 300, "a tool of a large server with a somewhat longer description to make the items bigger")
	replace(t, s, srv("big"), Tools("small", "x", 0, ""))
	changed, deleted := replace(t, s, srv("big"), big)
	if len(changed) != 300 || len(deleted) != 0 {
		t.Fatalf("first sync: %d changed, %d deleted", len(changed), len(deleted))
	}
	equalStrings(t, "changed", changed, sorted(ids(big)))
	got := listTools(t, s)
	equalStrings(t, "ListTools", ids(got), sorted(ids(big)))
	for i := range got {
		sameTool(t, got[i], big[i])
	}

	// Change 150, remove 100, add 100: 350 writes, well over the 25/100
	// item batch and transaction limits.
	next := make([]catalog.Tool, 0, 300)
	var wantChanged, wantDeleted []string
	for i, tool := range big {
		switch {
		case i < 150:
			tool = Tool("big", tool.Name, "changed description "+tool.Name)
			wantChanged = append(wantChanged, tool.ID)
			next = append(next, tool)
		case i < 200:
			next = append(next, tool)
		default:
			wantDeleted = append(wantDeleted, tool.ID)
		}
	}
	added := Tools("big", "new", 100, "added tool")
	next = append(next, added...)
	wantChanged = append(wantChanged, ids(added)...)
	changed, deleted = replace(t, s, srv("big"), next)
	equalStrings(t, "changed", changed, sorted(wantChanged))
	equalStrings(t, "deleted", deleted, sorted(wantDeleted))
	got = listTools(t, s)
	sort.Slice(next, func(i, j int) bool { return next[i].ID < next[j].ID })
	equalStrings(t, "ListTools after large change", ids(got), ids(next))
	for i := range got {
		sameTool(t, got[i], next[i])
	}
	one, err := s.GetTool(ctx, "big__tool007")
	if err != nil {
		t.Fatal(err)
	}
	if one.Description != "changed description tool007" {
		t.Fatalf("GetTool after large change: %q", one.Description)
	}

	if err := s.MarkServerStale(ctx, "big", "down"); err != nil {
		t.Fatal(err)
	}
	got = listTools(t, s)
	if len(got) != 300 {
		t.Fatalf("stale large server lists %d tools", len(got))
	}
	wantStatus(t, got, catalog.StatusStale)
	changed, _ = replace(t, s, srv("big"), next)
	if len(changed) != 300 {
		t.Fatalf("recovery of a large stale server reports %d changed, want 300", len(changed))
	}
	wantStatus(t, listTools(t, s), catalog.StatusActive)

	if err := s.DeleteServer(ctx, "big"); err != nil {
		t.Fatal(err)
	}
	if got := listTools(t, s); len(got) != 0 {
		t.Fatalf("DeleteServer of a large server left %d tools", len(got))
	}
}

func testConcurrentServers(t *testing.T, s catalog.Store) {
	const servers = 6
	var wg sync.WaitGroup
	errs := make(chan error, servers*2)
	for i := 0; i < servers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprintf("srv%d", i)
			for round := 0; round < 2; round++ {
				tools := Tools(id, "t", 10+round, fmt.Sprintf("round %d", round))
				if _, _, err := s.ReplaceServerTools(context.Background(), srv(id), tools); err != nil {
					errs <- fmt.Errorf("%s round %d: %w", id, round, err)
				}
			}
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	got := listTools(t, s)
	if len(got) != servers*11 {
		t.Fatalf("ListTools after concurrent syncs: %d tools, want %d", len(got), servers*11)
	}
	for _, tool := range got {
		if want := "round 1 "; len(tool.Description) < len(want) || tool.Description[:len(want)] != want {
			t.Fatalf("tool %s has description %q from an old round", tool.ID, tool.Description)
		}
	}
	if n := len(listServers(t, s)); n != servers {
		t.Fatalf("ListServers: %d, want %d", n, servers)
	}
}
