package ragapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/policy"
	"github.com/toolrag/mcp-gateway/pkg/ragapi"
	"github.com/toolrag/mcp-gateway/pkg/retrieve"
)

type memCatalog struct {
	tools   []catalog.Tool
	servers []catalog.Server
}

func (c *memCatalog) ListTools(context.Context) ([]catalog.Tool, error)     { return c.tools, nil }
func (c *memCatalog) ListServers(context.Context) ([]catalog.Server, error) { return c.servers, nil }

func TestDecodeQueries(t *testing.T) {
	cases := []struct {
		body    string
		wantErr string // "" = accepted
	}{
		{`{"queries":["send an email","read a file"]}`, ""},
		{`{"queries":[]}`, "1 to 8"},
		{`{"queries":["a",""]}`, `"queries"[1] must not be empty`},
		{`{"queries":["a"],"query":"b"}`, ""},
		{`{"queries":["a","A "],"query":" a"}`, ""},
		{`{"queries":["1","2","3","4","5","6","7","8"],"query":"9"}`, "hold 9 different queries; the limit is 8"},
		{`{"queries":["1","2","3","4","5","6","7","8"],"query":"1"}`, ""},
		{`{"queries":["a"],"query":"` + strings.Repeat("x", 101) + `"}`, `field "query" is 101 characters`},
		{`{"queries":["1","2","3","4","5","6","7","8","9"]}`, "1 to 8"},
		{`{"queries":"a"}`, "must be an array"},
		{`{}`, `"query" is required (or "queries")`},
	}
	for _, c := range cases {
		_, err := ragapi.DecodeRetrieveRequest([]byte(c.body), 50, 100)
		switch {
		case c.wantErr == "" && err != nil:
			t.Errorf("%s: %v", c.body, err)
		case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
			t.Errorf("%s: error %v, want one containing %q", c.body, err, c.wantErr)
		}
	}
}

// TestRetrieveQueries: POST /tool-rag/retrieve with queries answers one
// group per query, a tool listed once, scoped by the caller's policy.
func TestRetrieveQueries(t *testing.T) {
	c := &memCatalog{}
	for _, x := range [][3]string{
		{"mail", "send_email", "Send an email message."},
		{"mail", "search_email", "Search email messages."},
		{"files", "read_file", "Read a file from disk."},
		{"secret", "read_secret_file", "Read a secret file."},
	} {
		tl := catalog.Tool{Server: x[0], Name: x[1], Description: x[2]}
		catalog.Finalize(&tl)
		c.tools = append(c.tools, tl)
		c.servers = append(c.servers, catalog.Server{ID: x[0], Status: catalog.StatusActive})
	}
	r, err := retrieve.New(retrieve.Config{Tools: c})
	if err != nil {
		t.Fatal(err)
	}
	api := ragapi.New(ragapi.Config{Retriever: r})
	pol := policy.For(policy.Key{ID: "k", Servers: map[string]policy.Rule{"mail": {}, "files": {}}})
	body := `{"queries":["send an email","email","read a file"],"top_k":1}`
	req := httptest.NewRequest(http.MethodPost, "/tool-rag/retrieve", strings.NewReader(body))
	req = req.WithContext(policy.NewContext(req.Context(), pol))
	rec := httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	var out struct {
		Groups []ragapi.ResultGroup `json:"groups"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Groups) != 3 {
		t.Fatalf("%d groups: %s", len(out.Groups), rec.Body)
	}
	want := []string{"mail__send_email", "mail__search_email", "files__read_file"}
	for i, g := range out.Groups {
		if len(g.Results) != 1 || g.Results[0].ToolID != want[i] || g.Results[0].Match == "" {
			t.Errorf("group %d (%s): %+v, want %s with a match level", i, g.Query, g.Results, want[i])
		}
	}
	if strings.Contains(rec.Body.String(), "secret") {
		t.Errorf("a tool the key may not see is in the answer: %s", rec.Body)
	}

	// query and queries together: one grouped answer, query first, the
	// repeated query asked once.
	body = `{"query":"read a file","queries":["send an email","Read a  file"],"top_k":1}`
	req = httptest.NewRequest(http.MethodPost, "/tool-rag/retrieve", strings.NewReader(body))
	req = req.WithContext(policy.NewContext(req.Context(), pol))
	rec = httptest.NewRecorder()
	api.Handler().ServeHTTP(rec, req)
	if rec.Code != http.StatusOK {
		t.Fatalf("query + queries: status %d: %s", rec.Code, rec.Body)
	}
	out.Groups = nil
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Groups) != 2 || out.Groups[0].Query != "read a file" || out.Groups[1].Query != "send an email" ||
		len(out.Groups[0].Results) != 1 || out.Groups[0].Results[0].ToolID != "files__read_file" {
		t.Errorf("query + queries: %s, want the groups of \"read a file\" then \"send an email\"", rec.Body)
	}
}

// TestDecodeQueryAndQueries: "query" and "queries" together are merged as
// find_tools merges them: query first, repeats (case and spacing aside)
// dropped; the result is a grouped request.
func TestDecodeQueryAndQueries(t *testing.T) {
	req, err := ragapi.DecodeRetrieveRequest([]byte(`{"query":"Send an  email","queries":["read a file","send an email","READ A FILE","list files"]}`), 50, 100)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Send an  email", "read a file", "list files"}
	if req.Query != "" || strings.Join(req.Queries, "|") != strings.Join(want, "|") {
		t.Errorf("query %q, queries %q; want a grouped request with %q", req.Query, req.Queries, want)
	}
}
