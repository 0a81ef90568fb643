package local

import (
	"slices"
	"testing"
)

func TestRecovered(t *testing.T) {
	for _, c := range []struct {
		before, after, want []string
	}{
		{nil, []string{"a"}, nil},
		{[]string{"a"}, nil, []string{"a"}},
		{[]string{"a", "b", "c"}, []string{"b"}, []string{"a", "c"}},
		{[]string{"b"}, []string{"a", "b"}, nil},
	} {
		if got := recovered(c.before, c.after); !slices.Equal(got, c.want) {
			t.Errorf("recovered(%v, %v) = %v, want %v", c.before, c.after, got, c.want)
		}
	}
}
