package testenv

import (
	"encoding/json"
	"maps"
	"reflect"
	"testing"
)

// SameJSON fails the test, naming what, when got and want (decoded JSON
// objects) differ; it shows both as JSON.
func SameJSON(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	if !reflect.DeepEqual(got, want) {
		gb, _ := json.Marshal(got)
		wb, _ := json.Marshal(want)
		t.Errorf("%s:\n got %s\nwant %s", what, gb, wb)
	}
}

// SameTool is SameJSON for a tool as a client listed it (got) and as it
// should be (want): mcp-go always writes annotations, and an empty object
// there says no more than none.
func SameTool(t testing.TB, what string, got, want map[string]any) {
	t.Helper()
	if a, ok := got["annotations"].(map[string]any); ok && len(a) == 0 && want["annotations"] == nil {
		got = maps.Clone(got)
		delete(got, "annotations")
	}
	SameJSON(t, what, got, want)
}
