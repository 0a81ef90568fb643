package catalog

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestSplitName(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"get_weather", []string{"get", "weather"}},
		{"getHTTPResponse_v2", []string{"get", "http", "response", "v2"}},
		{"list-directory", []string{"list", "directory"}},
		{"Transfermarkt_search", []string{"transfermarkt", "search"}},
		{"a.b c", []string{"a", "b", "c"}},
		{"", nil},
	}
	for _, tt := range tests {
		if got := SplitName(tt.in); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitName(%q) = %v, want %v", tt.in, got, tt.want)
		}
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		name, ann       string
		wantType, scope string
	}{
		{"get_weather", "", TypeQuery, ScopeRead},
		{"delete_file", "", TypeAction, ScopeDestructive},
		{"createIssue", "", TypeAction, ScopeWrite},
		{"convert_to_pdf", "", TypeTransform, ScopeRead},
		{"weather", "", TypeQuery, ScopeRead},
		{"send_email", `{"readOnlyHint": true}`, TypeQuery, ScopeRead},
		{"frobnicate", `{"destructiveHint": true}`, TypeAction, ScopeDestructive},
		{"frobnicate", `{"readOnlyHint": false}`, TypeAction, ScopeWrite},
	}
	for _, tt := range tests {
		typ, scope := Classify(tt.name, "", json.RawMessage(tt.ann))
		if typ != tt.wantType || scope != tt.scope {
			t.Errorf("Classify(%q, %s) = %s/%s, want %s/%s", tt.name, tt.ann, typ, scope, tt.wantType, tt.scope)
		}
	}
}

func TestToolIDRoundTrip(t *testing.T) {
	id := ToolID("srv.1", "tool__with__sep")
	s, n, ok := SplitToolID(id)
	if !ok || s != "srv.1" || n != "tool__with__sep" {
		t.Fatalf("SplitToolID(%q) = %q %q %v", id, s, n, ok)
	}
	for _, bad := range []string{"nosep", "__x", "x__"} {
		if _, _, ok := SplitToolID(bad); ok {
			t.Errorf("SplitToolID(%q) should fail", bad)
		}
	}
}

func TestValidServerID(t *testing.T) {
	for _, ok := range []string{"echo", "a.b-c_d", "A9"} {
		if err := ValidServerID(ok); err != nil {
			t.Errorf("ValidServerID(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"", "a__b", "a b", "a/b", "ü"} {
		if err := ValidServerID(bad); err == nil {
			t.Errorf("ValidServerID(%q) should fail", bad)
		}
	}
}

func TestContentHashStable(t *testing.T) {
	a := Tool{Server: "s", Name: "t", Description: "d", InputSchema: json.RawMessage(`{"b":1,"a":2}`)}
	b := a
	b.InputSchema = json.RawMessage(`{ "a": 2, "b": 1 }`)
	Finalize(&a)
	Finalize(&b)
	if a.ContentHash != b.ContentHash {
		t.Fatal("hash depends on JSON key order or spacing")
	}
	c := a
	c.Description = "other"
	if ContentHash(c) == a.ContentHash {
		t.Fatal("hash ignores description")
	}
	if a.ID != "s__t" || a.Status != StatusActive {
		t.Fatalf("Finalize: %+v", a)
	}
}
