package testenv

import (
	"fmt"
	"testing"
)

// errT records Errorf instead of failing.
type errT struct {
	testing.TB
	msgs []string
}

func (e *errT) Helper() {}
func (e *errT) Errorf(format string, args ...any) {
	e.msgs = append(e.msgs, fmt.Sprintf(format, args...))
}

func TestSameTool(t *testing.T) {
	empty := map[string]any{}
	for _, tc := range []struct {
		name      string
		got, want map[string]any
		same      bool
	}{
		{"equal", map[string]any{"name": "a"}, map[string]any{"name": "a"}, true},
		{"empty annotations", map[string]any{"name": "a", "annotations": empty}, map[string]any{"name": "a"}, true},
		{"annotations wanted", map[string]any{"name": "a", "annotations": empty}, map[string]any{"name": "a", "annotations": empty}, true},
		{"set annotations", map[string]any{"name": "a", "annotations": map[string]any{"readOnlyHint": true}}, map[string]any{"name": "a"}, false},
		{"other name", map[string]any{"name": "a"}, map[string]any{"name": "b"}, false},
	} {
		e := &errT{TB: t}
		SameTool(e, tc.name, tc.got, tc.want)
		if (len(e.msgs) == 0) != tc.same {
			t.Errorf("%s: errors %q, want same=%v", tc.name, e.msgs, tc.same)
		}
		if _, ok := tc.got["annotations"]; !ok && tc.name == "empty annotations" {
			t.Errorf("%s: SameTool changed got", tc.name)
		}
	}
}
