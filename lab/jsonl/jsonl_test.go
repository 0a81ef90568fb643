package jsonl

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	long := `"` + strings.Repeat("x", 3<<20) + `"`
	tests := []struct {
		name, in  string
		wantLines []int
		wantRaw   []string
	}{
		{"empty", "", nil, nil},
		{"no final newline", "{\"a\":1}\n{\"b\":2}", []int{1, 2}, []string{`{"a":1}`, `{"b":2}`}},
		{"blank lines keep their numbers", "\n{}\r\n  \t\n[1]\n\n", []int{2, 4}, []string{"{}", "[1]"}},
		{"a line longer than the buffer", "1\n" + long + "\n", []int{1, 2}, []string{"1", long}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var lines []int
			var raws []string
			err := Read(strings.NewReader(tt.in), func(line int, raw []byte) error {
				lines = append(lines, line)
				raws = append(raws, string(raw))
				return nil
			})
			if err != nil || !slices.Equal(lines, tt.wantLines) || !slices.Equal(raws, tt.wantRaw) {
				t.Errorf("lines %v, raw %.40q, err %v; want %v, %.40q", lines, raws, err, tt.wantLines, tt.wantRaw)
			}
		})
	}
}

func TestReadError(t *testing.T) {
	bad := errors.New("bad value")
	fn := func(line int, raw []byte) error {
		if string(raw) == "x" {
			return bad
		}
		return nil
	}
	if err := Read(strings.NewReader("{}\n\nx\n{}\n"), fn); !errors.Is(err, bad) || err.Error() != "line 3: bad value" {
		t.Errorf("Read: %v, want line 3: bad value", err)
	}
	path := filepath.Join(t.TempDir(), "tools.jsonl")
	if err := os.WriteFile(path, []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ReadFile(path, fn); !errors.Is(err, bad) || err.Error() != path+" line 1: bad value" {
		t.Errorf("ReadFile: %v, want %s line 1: bad value", err, path)
	}
	if err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl"), fn); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ReadFile of a missing file: %v, want os.ErrNotExist", err)
	}
}
