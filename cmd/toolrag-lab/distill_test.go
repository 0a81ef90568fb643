package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// TestDistillCommand runs both halves of `toolrag-lab distill` on a small
// dataset: the corpus texts for the teacher, then the table from the
// teacher's vectors (here a stand-in teacher: a vector per word, summed).
func TestDistillCommand(t *testing.T) {
	dir := t.TempDir()
	ds := filepath.Join(dir, "data", "mini")
	if err := os.MkdirAll(ds, 0o755); err != nil {
		t.Fatal(err)
	}
	tools := `{"id":"mini__send_email","name":"send_email","description":"Send an email message"}
{"id":"mini__get_weather","name":"get_weather","description":"Get the weather forecast for a city"}
`
	pairs := `{"query":"email my boss","tool_ids":["mini__send_email"]}
{"query":"will it rain tomorrow","tool_ids":["mini__get_weather"]}
{"query":"email my boss","tool_ids":["mini__send_email"]}
`
	os.WriteFile(filepath.Join(ds, "tools.jsonl"), []byte(tools), 0o644)
	os.WriteFile(filepath.Join(ds, "pairs.jsonl"), []byte(pairs), 0o644)

	texts := filepath.Join(dir, "texts.jsonl")
	var out, errb bytes.Buffer
	if err := commands.Run(context.Background(), []string{"distill", "--data", filepath.Join(dir, "data"), "--exclude", "", "--texts", texts}, &out, &errb); err != nil {
		t.Fatalf("distill --texts: %v (%s)", err, errb.String())
	}
	raw, err := os.ReadFile(texts)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(raw)), "\n")
	if len(lines) != 4 { // two tool documents, two distinct queries
		t.Fatalf("%d texts, want 4:\n%s", len(lines), raw)
	}

	var vb strings.Builder
	for i, l := range lines {
		var s string
		if err := json.Unmarshal([]byte(l), &s); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		v := make([]float32, 8)
		for _, w := range strings.Fields(strings.ToLower(s)) {
			v[len(w)%8]++
		}
		b, _ := json.Marshal(map[string]any{"t": s, "v": v})
		fmt.Fprintf(&vb, "%s\n", b)
	}
	vectors := filepath.Join(dir, "vectors.jsonl")
	os.WriteFile(vectors, []byte(vb.String()), 0o644)
	tok, err := model2vec.WordPieceJSON([]string{"[PAD]", "[UNK]", "send", "email", "message", "get", "weather", "forecast", "city", "my", "boss", "will", "it", "rain", "tomorrow", "an", "for", "the", "a"}, "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	tokFile := filepath.Join(dir, "tokenizer.json")
	os.WriteFile(tokFile, tok, 0o644)
	table := filepath.Join(dir, "table")
	errb.Reset()
	if err := commands.Run(context.Background(), []string{"distill", "--vectors", vectors, "--tokenizer", tokFile, "--out", table, "--dim", "4", "--epochs", "2"}, &out, &errb); err != nil {
		t.Fatalf("distill --vectors: %v (%s)", err, errb.String())
	}
	m, err := model2vec.LoadDir(table)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 4 || !strings.Contains(errb.String(), "held-out cosine n/a") || !strings.Contains(errb.String(), "wrote "+table) {
		t.Errorf("table dim %d; log %q", m.Dim(), errb.String())
	}

	// A vectors file that is not one must be refused with its line.
	os.WriteFile(vectors, []byte(`{"t":"a","v":[1]}`+"\nnot json\n"), 0o644)
	if err := commands.Run(context.Background(), []string{"distill", "--vectors", vectors, "--tokenizer", tokFile, "--out", table}, &out, &errb); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("corrupt vectors: err = %v, want one naming line 2", err)
	}
}
