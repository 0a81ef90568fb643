package retrieve_test

import (
	"context"
	"slices"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/callseq"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

func relatedOf(t *testing.T, r *retrieve.Retriever, query, tool string, pol policy.Policy) []string {
	t.Helper()
	resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: query, TopK: 5, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range resp.Results {
		if res.Tool.ID == tool {
			return res.Related
		}
	}
	t.Fatalf("%q: %s not in the results %+v", query, tool, resp.Results)
	return nil
}

// TestRelatedObservedSequences: strong observed pairs (also across
// servers, and in both directions) rank above the catalog's structure,
// weak ones below it; a related tool the caller cannot see is never shown,
// however strong its pair.
func TestRelatedObservedSequences(t *testing.T) {
	r := keywordRetriever(t, retrieve.Config{})
	all := policy.Unrestricted()
	const shot = "browser__take_screenshot"
	before := relatedOf(t, r, "take a screenshot", shot, all)
	if slices.Contains(before, "files__write_file") {
		t.Fatalf("without sequences, related %v already lists files__write_file", before)
	}

	r.SetCallSequences(callseq.NewTable([]callseq.Count{
		{From: shot, To: "files__write_file", N: 9},       // strong, another server
		{From: "browser__navigate", To: shot, N: 6},       // strong, a predecessor
		{From: shot, To: "payments__create_refund", N: 1}, // counted once: not listed
		{From: shot, To: "gone__tool", N: 40},             // not in the catalog
		{From: "files__read_file", To: "files__write_file", N: 5},
	}, func(id string) bool { return id != "gone__tool" }))
	got := relatedOf(t, r, "take a screenshot", shot, all)
	if len(got) != retrieve.DefaultRelated || got[0] != "files__write_file" || got[1] != "browser__navigate" {
		t.Fatalf("related %v, want files__write_file and browser__navigate first (strong observed pairs)", got)
	}
	if slices.Contains(got, "payments__create_refund") || slices.Contains(got, "gone__tool") {
		t.Fatalf("related %v lists a weak pair above the structure, or a tool not in the catalog", got)
	}
	if got[2] != before[0] {
		t.Fatalf("related %v: the structure's first (%s) should follow the strong pairs", got, before[0])
	}

	// A key that cannot see the files server never sees write_file in
	// related, nor anything of another hidden tool.
	pol := policy.For(policy.Key{ID: "k", Servers: map[string]policy.Rule{"browser": {}}})
	hidden := relatedOf(t, r, "take a screenshot", shot, pol)
	for _, id := range hidden {
		if !slices.Contains([]string{"browser__navigate", "browser__new_page", "browser__click", "browser__screencast_start", "browser__screencast_stop"}, id) {
			t.Fatalf("related %v lists %s, which the key cannot see", hidden, id)
		}
	}
	if len(hidden) == 0 || hidden[0] != "browser__navigate" {
		t.Fatalf("related %v under the browser-only key, want browser__navigate first", hidden)
	}

	// A weak pair fills a place the structure leaves free.
	// A strong pair of a tool the catalog no longer has (a table older
	// than the catalog) is left out.
	r.SetCallSequences(callseq.NewTable([]callseq.Count{
		{From: "payments__create_refund", To: "files__write_file", N: 2},
		{From: "payments__create_refund", To: "gone__tool", N: 50},
	}, nil))
	rel := relatedOf(t, r, "refund a charge", "payments__create_refund", all)
	if !slices.Contains(rel, "files__write_file") || slices.Contains(rel, "gone__tool") {
		t.Fatalf("refund: related %v, want the weak observed files__write_file in a free place and no gone__tool", rel)
	}
	r.SetCallSequences(nil)
	if got := relatedOf(t, r, "take a screenshot", shot, all); !slices.Equal(got, before) {
		t.Fatalf("after SetCallSequences(nil): %v, want %v", got, before)
	}
}
