package retrieve_test

import (
	"context"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// TestLearnRelatedPrior: relations that co-needed pairs have more often
// than random pairs of their servers get a lift above 1, the others below;
// a relation seen rarely either way stays near 1.
func TestLearnRelatedPrior(t *testing.T) {
	tools := []retrieve.PriorTool{
		{"search_issues", "Search issues."}, // 0
		{"update_issue", "Update an issue."},
		{"list_users", "List users."}, // 2
		{"delete_user", "Delete a user."},
		{"get_weather", "Get the weather."}, // 4
		{"send_mail", "Send a mail."},
		{"list_repos", "List repositories."}, // 6
		{"create_repo", "Create a repository."},
		{"stop_timer", "Stop the timer."}, // 8
	}
	cat := retrieve.PriorCatalog{Tools: tools, Tasks: [][]int{{0, 1}, {2, 3}, {6, 7}, {0, 1, 1}}}
	p := retrieve.LearnRelatedPrior([]retrieve.PriorCatalog{cat, {Tools: tools}}, 1)
	if p.Tasks != 4 || p.Pairs != 8 {
		t.Errorf("learned from %d tasks, %d pairs; want 4, 8 (a repeated tool counts once)", p.Tasks, p.Pairs)
	}
	if !(p.Overlap[2] > 1 && p.Overlap[0] < 1) {
		t.Errorf("overlap lifts none/some/all %v: want all > 1 > none (every co-needed pair shares its object)", p.Overlap)
	}
	if v := p.Verbs["read>update"]; v <= 1 {
		t.Errorf("read>update lift %v, want > 1 (search_issues → update_issue is co-needed)", v)
	}
	if v := p.Verbs["stop>send"]; v < 0.5 || v > 1.01 {
		t.Errorf("stop>send lift %v, want near 1 (one random pair, never co-needed)", v)
	}
	if empty := retrieve.LearnRelatedPrior([]retrieve.PriorCatalog{{Tools: tools}}, 1); empty.Tasks != 0 || empty.Overlap != [3]float64{1, 1, 1} {
		t.Errorf("no multi-tool task: %+v, want every lift 1", empty)
	}
}

// TestDefaultRelatedPrior: the embedded prior was learned from real
// multi-tool tasks and says what docs/retrieval.md reports: tools sharing
// their object, or named by the other's description, are co-needed far
// more often than two tools of the same server at random.
func TestDefaultRelatedPrior(t *testing.T) {
	p := retrieve.DefaultRelatedPrior
	if p.Tasks < 1000 || len(p.Verbs) < 40 {
		t.Fatalf("default prior from %d tasks, %d verb pairs", p.Tasks, len(p.Verbs))
	}
	if !(p.Overlap[0] < 1 && 1 < p.Overlap[1] && p.Overlap[1] < p.Overlap[2]) || p.Mention[1] <= p.Mention[0] {
		t.Errorf("default prior %v", p)
	}
}

// TestRelatedPriorOrder: the prior, not the tool ids, orders related
// candidates of equal structure (update_issue and delete_issue both share
// search_issues' object with another action).
func TestRelatedPriorOrder(t *testing.T) {
	c := &memCatalog{servers: []catalog.Server{{ID: "issues", Status: catalog.StatusActive}}}
	for _, x := range [][2]string{
		{"search_issues", "Search issues by text."},
		{"delete_issue", "Delete an issue."},
		{"update_issue", "Change the title of an issue."},
		{"list_labels", "List the labels."},
	} {
		tl := catalog.Tool{Server: "issues", Name: x[0], Description: x[1]}
		catalog.Finalize(&tl)
		c.tools = append(c.tools, tl)
	}
	prior := &retrieve.RelatedPrior{Overlap: [3]float64{0.5, 2, 4}, Mention: [2]float64{1, 3},
		Verbs: map[string]float64{"read>update": 3, "read>delete": 0.5}}
	for _, tc := range []struct {
		name  string
		cfg   retrieve.Config
		first string
	}{
		{"learned prior", retrieve.Config{Tools: c, Experimental: retrieve.Experimental{RelatedPrior: prior}}, "issues__update_issue"},
		{"structure only", retrieve.Config{Tools: c, Experimental: retrieve.Experimental{RelatedPrior: prior, RelatedStructureOnly: true}}, "issues__delete_issue"},
	} {
		r := newRetriever(t, tc.cfg)
		resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: "search issues", TopK: 1, Policy: policy.Unrestricted()})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.Results) != 1 || resp.Results[0].Tool.ID != "issues__search_issues" {
			t.Fatalf("%s: %+v", tc.name, resp.Results)
		}
		rel := resp.Results[0].Related
		if len(rel) != 2 || rel[0] != tc.first {
			t.Errorf("%s: related %v, want 2 with %s first (list_labels shares nothing)", tc.name, rel, tc.first)
		}
	}
}
