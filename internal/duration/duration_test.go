package duration

import (
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		ok   bool
	}{
		{"30", 30 * time.Second, true},
		{"0.5", 500 * time.Millisecond, true},
		{"0", 0, true},
		{"1m30s", 90 * time.Second, true},
		{"250ms", 250 * time.Millisecond, true},
		{"-1", 0, false},
		{"-2s", 0, false},
		{"soon", 0, false},
		{"", 0, false},
	} {
		got, err := Parse(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("Parse(%q) = %v, %v; want %v, ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
