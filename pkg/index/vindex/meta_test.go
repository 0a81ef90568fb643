package vindex

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestToolKey(t *testing.T) {
	// FNV-1a 64 reference values with the sign bit cleared.
	tests := []struct {
		in   string
		want int64
	}{
		{"", 0x4bf29ce484222325},       // 0xcbf29ce484222325 (offset basis)
		{"a", 0x2f63dc4c8601ec8c},      // 0xaf63dc4c8601ec8c
		{"foobar", 0x05944171f73967e8}, // 0x85944171f73967e8
	}
	for _, tc := range tests {
		if got := ToolKey(tc.in); got != tc.want {
			t.Errorf("ToolKey(%q) = %#x, want %#x", tc.in, got, tc.want)
		}
	}
	seen := map[int64]string{}
	for i := range 20000 {
		id := "srv" + strconv.Itoa(i%37) + "__tool_" + strconv.Itoa(i)
		k := ToolKey(id)
		if k < 0 {
			t.Fatalf("ToolKey(%q) = %d is negative", id, k)
		}
		if prev, ok := seen[k]; ok {
			t.Fatalf("ToolKey collision between %q and %q", prev, id)
		}
		seen[k] = id
	}
}

func TestMetaAssign(t *testing.T) {
	var m Meta
	k, err := m.Assign("fs__read_file")
	if err != nil || k != ToolKey("fs__read_file") {
		t.Fatalf("Assign = %d, %v", k, err)
	}
	if k2, err := m.Assign("fs__read_file"); err != nil || k2 != k {
		t.Fatalf("second Assign of the same tool = %d, %v", k2, err)
	}
	if got, ok := m.ToolID(k); !ok || got != "fs__read_file" {
		t.Fatalf("ToolID = %q %v", got, ok)
	}
	// A real 63-bit collision is impractical to find; plant one.
	m.IDs[strconv.FormatInt(ToolKey("web__fetch"), 10)] = "other__tool"
	if _, err := m.Assign("web__fetch"); !errors.Is(err, ErrCollision) || !strings.Contains(err.Error(), `"other__tool" and "web__fetch"`) {
		t.Fatalf("colliding Assign: %v", err)
	}
	if m.IDs[strconv.FormatInt(ToolKey("web__fetch"), 10)] != "other__tool" {
		t.Fatal("colliding Assign overwrote the mapping")
	}
	m.Hashes = map[string]string{"fs__read_file": "h1"}
	m.Unassign("fs__read_file")
	m.Unassign("web__fetch") // maps to another tool: must stay
	if _, ok := m.ToolID(k); ok || len(m.Hashes) != 0 || len(m.IDs) != 1 {
		t.Fatalf("after Unassign: ids %v hashes %v", m.IDs, m.Hashes)
	}
}

func TestMetaCheck(t *testing.T) {
	ix := New(2)
	var m Meta
	for _, tool := range []string{"a__x", "a__y"} {
		k, _ := m.Assign(tool)
		ix.Upsert(k, unit(1, 1))
	}
	good := Meta{Dim: 2, Count: 2, IDs: m.IDs}
	tests := []struct {
		name string
		edit func(*Meta)
		want string
	}{
		{"consistent", func(*Meta) {}, ""},
		{"dim", func(m *Meta) { m.Dim = 3 }, "dimension 3"},
		{"count", func(m *Meta) { m.Count = 1 }, "says 1 vectors"},
		{"missing id", func(m *Meta) {
			m.IDs = map[string]string{strconv.FormatInt(ToolKey("a__x"), 10): "a__x", "5": "b__z"}
		}, "has no tool id"},
		{"extra id", func(m *Meta) {
			m.IDs = map[string]string{"1": "q", "2": "r", "3": "s"}
		}, "maps 3 ids"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := good
			tc.edit(&m)
			err := m.Check(ix)
			if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
				t.Fatalf("Check = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestMetaJSON(t *testing.T) {
	m := Meta{ModelID: "builtin-v1", Dim: 256, Count: 1, BuiltAt: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
		IDs: map[string]string{"42": "a__b"}, Hashes: map[string]string{"a__b": "abc"}, IndexSHA256: "ff"}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"model_id":"builtin-v1","dim":256,"count":1,"built_at":"2025-01-02T03:04:05Z","ids":{"42":"a__b"},"hashes":{"a__b":"abc"},"index_sha256":"ff"}`
	if string(b) != want {
		t.Fatalf("JSON = %s\nwant %s", b, want)
	}
}
