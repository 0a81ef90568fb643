package retrieve_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

// agentCatalog is a small catalog shaped like real MCP servers: a browser
// server, a payments server, a Cloudflare-like server, an issue tracker and
// a file server.
func agentCatalog() *memCatalog {
	type tl struct{ server, name, desc string }
	tools := []tl{
		{"browser", "navigate", "Navigate the browser to a URL."},
		{"browser", "new_page", "Open a new browser page and load a URL."},
		{"browser", "take_screenshot", "Take a screenshot of the current page or of an element."},
		{"browser", "screencast_start", "Start recording a screencast video of the browser."},
		{"browser", "screencast_stop", "Stop the running screencast recording and save the video."},
		{"browser", "click", "Click an element on the page."},
		{"payments", "list_coupons", "List coupons. Returns the coupons of the account, with coupon ids, coupon amounts and coupon durations."},
		{"payments", "create_coupon", "Create a coupon for discounts."},
		{"payments", "create_refund", "Refund a charge."},
		{"workers", "version_rollback", "Revert a Worker script to an earlier deployed version."},
		{"workers", "list_deployments", "List the deployments of a Worker script."},
		{"workers", "get_worker", "Get a Worker script's settings."},
		{"issues", "search_issues", "Search issues by text."},
		{"issues", "update_issue", "Change the title, body or state of an issue."},
		{"issues", "delete_issue", "Delete an issue."},
		{"files", "write_file", "Write text to a file on disk."},
		{"files", "read_file", "Read a file from disk."},
		{"files", "screen_shot_diff", "Compare two images pixel by pixel."},
	}
	c := &memCatalog{}
	seen := map[string]bool{}
	for _, x := range tools {
		t := catalog.Tool{Server: x.server, Name: x.name, Description: x.desc}
		catalog.Finalize(&t)
		c.tools = append(c.tools, t)
		if !seen[x.server] {
			seen[x.server] = true
			c.servers = append(c.servers, catalog.Server{ID: x.server, Status: catalog.StatusActive})
		}
	}
	return c
}

func keywordRetriever(t *testing.T, cfg retrieve.Config) *retrieve.Retriever {
	t.Helper()
	cfg.Tools = agentCatalog()
	return newRetriever(t, cfg)
}

func top(t *testing.T, r *retrieve.Retriever, q string, k int) []string {
	t.Helper()
	resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: q, TopK: k, Policy: policy.Unrestricted()})
	if err != nil {
		t.Fatal(err)
	}
	return ids(resp)
}

// TestCompoundWords: split and joined spellings of a compound match each
// other both ways; without the feature they do not.
func TestCompoundWords(t *testing.T) {
	cases := []struct {
		query, want string
		queryOnly   bool // decided at query time (Config.Compounds)
	}{
		{"roll back a worker deployment", "workers__version_rollback", true}, // query split, tool joined
		// Query joined, tool name split: the index holds the name's joined
		// words, so this holds without Config.Compounds too.
		{"compare a screenshot", "files__screen_shot_diff", false},
	}
	on := keywordRetriever(t, retrieve.Config{Experimental: retrieve.Experimental{Compounds: true}})
	off := keywordRetriever(t, retrieve.Config{})
	for _, c := range cases {
		if got := top(t, on, c.query, 3); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q with compounds: top %v, want %s first", c.query, got, c.want)
		}
		if got := top(t, off, c.query, 3); c.queryOnly && len(got) > 0 && got[0] == c.want {
			t.Errorf("%q without compounds: %s is already first (%v): the case proves nothing", c.query, c.want, got)
		}
	}
}

// TestVerbAgreement: the query's action decides between tools of the
// same object.
func TestVerbAgreement(t *testing.T) {
	cases := []struct{ query, want, other string }{
		{"add a coupon", "payments__create_coupon", "payments__list_coupons"},
		{"show me the coupons", "payments__list_coupons", "payments__create_coupon"},
		{"start recording the browser screencast", "browser__screencast_start", "browser__screencast_stop"},
		{"stop the browser screencast", "browser__screencast_stop", "browser__screencast_start"},
		// A phrasal verb counts as a whole.
		{"turn off the browser screencast", "browser__screencast_stop", "browser__screencast_start"},
		// A question without an action verb reads.
		{"what issues mention the login bug", "issues__search_issues", "issues__delete_issue"},
	}
	on := keywordRetriever(t, retrieve.Config{})
	for _, c := range cases {
		got := top(t, on, c.query, 5)
		if i, j := slices.Index(got, c.want), slices.Index(got, c.other); i < 0 || (j >= 0 && j < i) {
			t.Errorf("%q: %v, want %s above %s", c.query, got, c.want, c.other)
		}
	}
	// Without the feature, the description that repeats "coupon" wins.
	off := keywordRetriever(t, retrieve.Config{Experimental: retrieve.Experimental{VerbWeight: -1}})
	if got := top(t, off, "add a coupon", 2); got[0] != "payments__list_coupons" {
		t.Errorf("fixture check: without verb agreement %v, want list_coupons first", got)
	}
}

// TestMatchLevels: a query the catalog answers gets a strong match; a
// query about something no tool does gets only weak ones and a hint.
func TestMatchLevels(t *testing.T) {
	r := keywordRetriever(t, retrieve.Config{})
	resp, err := retrieve.RetrieveGroups(context.Background(), r, retrieve.Request{TopK: 3, Policy: policy.Unrestricted()},
		[]string{"create a coupon", "send a fax to the tax office"})
	if err != nil {
		t.Fatal(err)
	}
	g0, g1 := resp.Groups[0], resp.Groups[1]
	if len(g0.Results) == 0 || g0.Results[0].Match != retrieve.MatchStrong || g0.Hint != "" {
		t.Errorf("create a coupon: first result %+v, hint %q; want a strong match and no hint", g0.Results, g0.Hint)
	}
	for _, res := range g1.Results {
		if res.Match != retrieve.MatchWeak {
			t.Errorf("send a fax: %s is %s, want weak", res.Tool.ID, res.Match)
		}
	}
	if !strings.Contains(g1.Hint, "no tool matches") {
		t.Errorf("send a fax: hint %q, want the no-match hint", g1.Hint)
	}
}

func TestCalibrationLevel(t *testing.T) {
	c := retrieve.DefaultCalibration
	cases := []struct {
		s    retrieve.MatchSignals
		want string
	}{
		{retrieve.MatchSignals{Coverage: 1, NameCoverage: 1}, retrieve.MatchStrong},
		{retrieve.MatchSignals{Coverage: 1, NameCoverage: 0, Cosine: 0.99, HasCosine: true}, retrieve.MatchStrong},
		{retrieve.MatchSignals{Coverage: 1, NameCoverage: 0}, retrieve.MatchPartial},
		{retrieve.MatchSignals{Coverage: 0.1, Cosine: 0.99, HasCosine: true}, retrieve.MatchPartial},
		{retrieve.MatchSignals{Coverage: 0.1}, retrieve.MatchWeak},
		{retrieve.MatchSignals{}, retrieve.MatchWeak},
	}
	for _, tc := range cases {
		if got := c.Level(tc.s); got != tc.want {
			t.Errorf("Level(%+v) = %s, want %s", tc.s, got, tc.want)
		}
	}
}

// TestGroups: one group per query, top_k each, a tool listed only in the
// first group that finds it; later groups are refilled from further down.
func TestGroups(t *testing.T) {
	r := keywordRetriever(t, retrieve.Config{})
	ctx := context.Background()
	pol := policy.Unrestricted()
	queries := []string{"take a screenshot of the page", "screenshot", "write a file"}
	resp, err := retrieve.RetrieveGroups(ctx, r, retrieve.Request{TopK: 2, Policy: pol}, queries)
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Groups) != 3 {
		t.Fatalf("%d groups, want 3", len(resp.Groups))
	}
	seen := map[string]int{}
	for gi, g := range resp.Groups {
		if g.Query != queries[gi] || len(g.Results) != 2 {
			t.Errorf("group %d: query %q with %d results, want %q with 2", gi, g.Query, len(g.Results), queries[gi])
		}
		for _, res := range g.Results {
			if prev, dup := seen[res.Tool.ID]; dup {
				t.Errorf("%s in groups %d and %d", res.Tool.ID, prev, gi)
			}
			seen[res.Tool.ID] = gi
		}
	}
	if got := resp.Groups[0].Results[0].Tool.ID; got != "browser__take_screenshot" {
		t.Errorf("group 0 first %s, want browser__take_screenshot", got)
	}
	if got := resp.Groups[2].Results[0].Tool.ID; got != "files__write_file" {
		t.Errorf("group 2 first %s, want files__write_file", got)
	}
	// The batched pass ranks each query as Retrieve does.
	for _, q := range queries {
		one, err := retrieve.RetrieveGroups(ctx, r, retrieve.Request{TopK: 4, Policy: pol}, []string{q})
		if err != nil {
			t.Fatal(err)
		}
		single := top(t, r, q, 4)
		var grouped []string
		for _, res := range one.Groups[0].Results {
			grouped = append(grouped, res.Tool.ID)
		}
		if !slices.Equal(grouped, single) {
			t.Errorf("%q: grouped %v, Retrieve %v", q, grouped, single)
		}
	}
	// Bad input.
	for _, bad := range [][]string{nil, {"ok", " "}, make([]string, retrieve.MaxQueries+1)} {
		if _, err := retrieve.RetrieveGroups(ctx, r, retrieve.Request{Policy: pol}, bad); err == nil {
			t.Errorf("RetrieveGroups(%q) succeeded, want an error", bad)
		}
	}
}

// TestGroupsDense: with the builtin embedder, the one-pass dense scan of a
// grouped request gives each query the ranking Retrieve gives it.
func TestGroupsDense(t *testing.T) {
	c := agentCatalog()
	emb := embed.NewBuiltin()
	r := newRetriever(t, retrieve.Config{Tools: c, Index: buildIndex(t, c, emb), Embedder: emb})
	ctx := context.Background()
	pol := policy.Unrestricted()
	queries := []string{"open a web page", "record a video of the browser", "refund a payment", "write a file to disk", "roll back a worker"} // 5 vectors: the parallel scan
	resp, err := retrieve.RetrieveGroups(ctx, r, retrieve.Request{TopK: 1, Policy: pol}, queries)
	if err != nil {
		t.Fatal(err)
	}
	for i, q := range queries {
		want := top(t, r, q, 1)
		if got := resp.Groups[i].Results; len(got) != 1 || got[0].Tool.ID != want[0] {
			t.Errorf("%q: grouped %+v, Retrieve %v", q, got, want)
		}
	}
}

// TestRelated: companions and prerequisites come from the catalog's
// structure, and never name a tool the caller cannot see.
func TestRelated(t *testing.T) {
	cases := []struct {
		query, tool string
		want        []string // must be among the related ids
		not         []string
	}{
		{"start recording a browser screencast", "browser__screencast_start", []string{"browser__screencast_stop"}, nil},
		{"delete an issue", "issues__delete_issue", []string{"issues__search_issues", "issues__update_issue"}, nil},
		{"take a screenshot", "browser__take_screenshot", []string{"browser__new_page"}, []string{"files__write_file"}},
	}
	r := keywordRetriever(t, retrieve.Config{})
	for _, c := range cases {
		resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: c.query, TopK: 5, Policy: policy.Unrestricted()})
		if err != nil {
			t.Fatal(err)
		}
		var rel []string
		for _, res := range resp.Results {
			if res.Tool.ID == c.tool {
				rel = res.Related
			}
		}
		for _, w := range c.want {
			if !slices.Contains(rel, w) {
				t.Errorf("%s: related %v, want %s among them", c.tool, rel, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(rel, w) {
				t.Errorf("%s: related %v lists %s", c.tool, rel, w)
			}
		}
		if len(rel) > retrieve.DefaultRelated {
			t.Errorf("%s: %d related, want at most %d", c.tool, len(rel), retrieve.DefaultRelated)
		}
	}
	// A policy that hides screencast_stop hides it from related too.
	pol := policy.For(policy.Key{ID: "k", Servers: map[string]policy.Rule{"browser": {ToolPrefixes: []string{"screencast_start", "navigate"}}}})
	resp, err := r.Retrieve(context.Background(), retrieve.Request{Query: "start a screencast", TopK: 3, Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	for _, res := range resp.Results {
		for _, id := range res.Related {
			if id == "browser__screencast_stop" {
				t.Errorf("related lists a tool the policy hides: %+v", res)
			}
		}
	}
}

// TestCompoundSplit: a query word no visible tool holds is split into two
// catalog words ("screenshot" → "screen" + "shot").
func TestCompoundSplit(t *testing.T) {
	c := &memCatalog{servers: []catalog.Server{{ID: "cam", Status: catalog.StatusActive}}}
	for _, x := range [][2]string{
		{"capture", "Capture the screen as a shot image."},
		{"record_audio", "Record audio from the microphone and take notes."},
		{"take_photo", "Take a photo with the camera."},
	} {
		tl := catalog.Tool{Server: "cam", Name: x[0], Description: x[1]}
		catalog.Finalize(&tl)
		c.tools = append(c.tools, tl)
	}
	on := newRetriever(t, retrieve.Config{Tools: c, Experimental: retrieve.Experimental{Compounds: true}})
	off := newRetriever(t, retrieve.Config{Tools: c})
	if got := top(t, on, "take a screenshot", 3); len(got) == 0 || got[0] != "cam__capture" {
		t.Errorf("with compounds: %v, want cam__capture first", got)
	}
	if got := top(t, off, "take a screenshot", 3); len(got) > 0 && got[0] == "cam__capture" {
		t.Errorf("without compounds: %v already has cam__capture first: the case proves nothing", got)
	}
}

// TestToolRequestPhrasing: a capability asked for as a tool ("find a tool
// to …") ranks like the capability itself; ranked as written, "find"
// reads as the action and the search tool comes first.
func TestToolRequestPhrasing(t *testing.T) {
	on := keywordRetriever(t, retrieve.Config{})
	off := keywordRetriever(t, retrieve.Config{Experimental: retrieve.Experimental{KeepToolRequest: true}})
	for _, c := range []struct{ query, want string }{
		{"find a tool to remove an issue", "issues__delete_issue"},
		{"look for a tool to halt the browser screencast", "browser__screencast_stop"},
	} {
		if got := top(t, on, c.query, 3); len(got) == 0 || got[0] != c.want {
			t.Errorf("%q: top %v, want %s first", c.query, got, c.want)
		}
		if got := top(t, off, c.query, 3); len(got) > 0 && got[0] == c.want {
			t.Errorf("%q kept as written: %s is first already (%v): the case proves nothing", c.query, c.want, got)
		}
	}
}
