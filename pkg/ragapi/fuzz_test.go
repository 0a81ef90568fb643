package ragapi

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
)

// Limits of the fuzzed decoder: small enough that mutation reaches them.
const (
	fuzzMaxTopK      = 50
	fuzzMaxQueryRune = 100
)

// FuzzRetrieveRequest feeds arbitrary bodies to DecodeRetrieveRequest:
// it must not panic, must explain every rejection, and every accepted
// request must satisfy all the invariants the retrieve handler relies on.
func FuzzRetrieveRequest(f *testing.F) {
	f.Add([]byte(`{"query":"send an email","top_k":3}`))
	f.Add([]byte(`{"queries":["send an email","read a file"],"top_k":3}`))
	f.Add([]byte(`{"query":"x","allowed_servers":["github"],"permission_scope":"read","tool_type":"query","include_schema":true}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		req, err := DecodeRetrieveRequest(body, fuzzMaxTopK, fuzzMaxQueryRune)
		if err != nil {
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("rejection without a message")
			}
			return
		}
		checkAccepted(t, body, req)
	})
}

func checkAccepted(t *testing.T, body []byte, req RetrieveRequest) {
	t.Helper()
	if !json.Valid(body) {
		t.Fatalf("accepted a body that is not one JSON value: %q", body)
	}
	queries := []string{req.Query}
	if req.Queries != nil {
		if req.Query != "" || len(req.Queries) == 0 || len(req.Queries) > 8 {
			t.Fatalf("accepted query %q with %d queries", req.Query, len(req.Queries))
		}
		queries = req.Queries
	}
	for _, q := range queries {
		if strings.TrimSpace(q) == "" {
			t.Fatalf("accepted an empty query: %q", body)
		}
		if !utf8.ValidString(q) {
			t.Fatalf("accepted a query that is not UTF-8: %q", q)
		}
		if n := utf8.RuneCountInString(q); n > fuzzMaxQueryRune {
			t.Fatalf("accepted a query of %d characters (limit %d)", n, fuzzMaxQueryRune)
		}
	}
	if req.TopK != nil && (*req.TopK < 1 || *req.TopK > fuzzMaxTopK) {
		t.Fatalf("accepted top_k %d", *req.TopK)
	}
	for _, s := range req.AllowedServers {
		if err := catalog.ValidServerID(s); err != nil {
			t.Fatalf("accepted allowed_servers entry %q: %v", s, err)
		}
	}
	switch req.PermissionScope {
	case "", catalog.ScopeRead, catalog.ScopeWrite, catalog.ScopeDestructive:
	default:
		t.Fatalf("accepted permission_scope %q", req.PermissionScope)
	}
	switch req.ToolType {
	case "", catalog.TypeQuery, catalog.TypeAction, catalog.TypeTransform:
	default:
		t.Fatalf("accepted tool_type %q", req.ToolType)
	}
	// What was accepted survives a round trip unchanged.
	again, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	back, err := DecodeRetrieveRequest(again, fuzzMaxTopK, fuzzMaxQueryRune)
	if err != nil || !reflect.DeepEqual(normalize(back), normalize(req)) {
		t.Fatalf("round trip of %q: %+v, %v", again, back, err)
	}
}

// normalize makes an empty allowed_servers list and a missing one equal
// (omitempty drops the empty list on the round trip).
func normalize(r RetrieveRequest) RetrieveRequest {
	if len(r.AllowedServers) == 0 {
		r.AllowedServers = nil
	}
	return r
}

func TestDecodeRetrieveRequest(t *testing.T) {
	cases := []struct {
		name, body string
		want       string // substring of the error; "" = accepted
	}{
		{"minimal", `{"query":"send an email"}`, ""},
		{"full", `{"query":"q","top_k":50,"allowed_servers":["a","b.c"],"permission_scope":"write","tool_type":"action","include_schema":false}`, ""},
		{"empty body", ``, "empty"},
		{"blank query", `{"query":"  "}`, `"query" is required`},
		{"query too long", `{"query":"` + strings.Repeat("é", fuzzMaxQueryRune+1) + `"}`, "the limit is 100"},
		{"query at limit", `{"query":"` + strings.Repeat("é", fuzzMaxQueryRune) + `"}`, ""},
		{"top_k zero", `{"query":"x","top_k":0}`, `"top_k" must be between 1 and 50`},
		{"top_k too big", `{"query":"x","top_k":51}`, `"top_k" must be between 1 and 50`},
		{"top_k string", `{"query":"x","top_k":"5"}`, `"top_k" must be an integer`},
		{"top_k fraction", `{"query":"x","top_k":2.5}`, `top_k`},
		{"bad server id", `{"query":"x","allowed_servers":["a__b"]}`, `allowed_servers`},
		{"bad scope", `{"query":"x","permission_scope":"root"}`, `permission_scope`},
		{"bad type", `{"query":"x","tool_type":"y"}`, `tool_type`},
		{"unknown field", `{"query":"x","bogus":1}`, `unknown field "bogus"`},
		{"second object", `{"query":"x"} {"query":"y"}`, "data after the JSON object"},
		{"trailing bracket", `{"query":"x"}]`, "data after the JSON object"},
		{"trailing brace", `{"query":"x"}}`, "data after the JSON object"},
		{"not an object", `[]`, "must be a JSON object"},
		{"string", `"query"`, "must be a JSON object"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := DecodeRetrieveRequest([]byte(c.body), fuzzMaxTopK, fuzzMaxQueryRune)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case c.want == "":
				checkAccepted(t, []byte(c.body), req)
			case err == nil || !strings.Contains(err.Error(), c.want):
				t.Fatalf("error %v, want one containing %q", err, c.want)
			}
		})
	}
}
