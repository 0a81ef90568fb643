package main

import (
	"maps"
	"strings"
	"testing"
)

func TestParseWeights(t *testing.T) {
	tests := []struct {
		in      string
		want    map[string]float64
		wantErr string
	}{
		{"mcpagent=2", map[string]float64{"clinc150": 0.5, "hwu64": 0.5, "mcpagent": 2}, ""},
		{"clinc150=1, mcpagent=1.5", map[string]float64{"clinc150": 1, "hwu64": 0.5, "mcpagent": 1.5}, ""},
		{"mcpagent", nil, `"mcpagent"`},
		{"mcpagent=0", nil, "w > 0"},
		{"=2", nil, "name=w"},
		{"mcpagent=two", nil, "name=w"},
	}
	for _, tt := range tests {
		got, err := parseWeights(tt.in)
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("parseWeights(%q) err = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || !maps.Equal(got, tt.want) {
			t.Errorf("parseWeights(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		}
	}
}
