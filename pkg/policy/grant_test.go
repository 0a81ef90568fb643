package policy

import (
	"slices"
	"testing"
)

func TestParseGrant(t *testing.T) {
	tests := []struct {
		in       string
		id       string
		prefixes []string
		wantErr  bool
	}{
		{"github", "github", nil, false},
		{"github:search_,get_", "github", []string{"search_", "get_"}, false},
		{" fs:read , ", "fs", []string{"read"}, false},
		{"fs:", "", nil, true},
		{"bad id", "", nil, true},
		{"a__b", "", nil, true},
		{"", "", nil, true},
	}
	for _, tc := range tests {
		id, rule, err := ParseGrant(tc.in)
		if (err != nil) != tc.wantErr || id != tc.id || !slices.Equal(rule.ToolPrefixes, tc.prefixes) {
			t.Errorf("ParseGrant(%q) = %q %v %v", tc.in, id, rule.ToolPrefixes, err)
		}
	}
}
