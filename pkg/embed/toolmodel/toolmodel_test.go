package toolmodel_test

import (
	"io/fs"
	"math"
	"strings"
	"sync"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/catalog"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
	"github.com/toolrag/mcp-gateway/pkg/embed/toolmodel"
	"github.com/toolrag/mcp-gateway/pkg/index/indexer"
)

func TestLoad(t *testing.T) {
	m, err := toolmodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	m2, _ := toolmodel.Load()
	if m != m2 {
		t.Fatal("Load returned a different model on the second call")
	}
	if m.Dim() < 64 || m.Dim() > 1024 {
		t.Fatalf("Dim = %d", m.Dim())
	}
	if !strings.HasPrefix(m.ID(), "model2vec:") {
		t.Fatalf("ID = %q", m.ID())
	}
	if !m.Normalize() {
		t.Fatal("the built-in model must produce unit vectors")
	}
	v := m.Embed("send an email to my team")
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if math.Abs(n-1) > 1e-4 {
		t.Fatalf("|v|² = %v, want 1", n)
	}
}

func TestFilesWithinSizeBudget(t *testing.T) {
	var total int64
	err := fs.WalkDir(toolmodel.FS(), ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		total += info.Size()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The budget: 8 MB for everything the builtin embedder loads.
	if total > 8_000_000 {
		t.Fatalf("model files total %d bytes, over the 8 MB budget", total)
	}
	for _, f := range []string{model2vec.SafetensorsFile, model2vec.TokenizerFile, model2vec.ConfigFile} {
		if _, err := fs.Stat(toolmodel.FS(), f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	t.Logf("model files: %d bytes", total)
}

// TestTokenizerIsBERTUncased checks that the shipped vocabulary tokenizes
// like the BERT uncased WordPiece it was pruned from.
func TestTokenizerIsBERTUncased(t *testing.T) {
	m, err := toolmodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	tok := m.Tokenizer()
	tests := []struct {
		in   string
		want []string
	}{
		{"Send an E-mail", []string{"send", "an", "e", "-", "mail"}},
		{"get_weather forecasts", []string{"get", "_", "weather", "forecast", "##s"}},
		{"Café", []string{"cafe"}},
	}
	for _, tt := range tests {
		ids := tok.Encode(tt.in)
		got := make([]string, len(ids))
		for i, id := range ids {
			got[i] = tok.Token(id)
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("Encode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestRanksObviousTools is a smoke test of retrieval quality: on a small
// hand-written catalog every query must rank its tool first.
func TestRanksObviousTools(t *testing.T) {
	m, err := toolmodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	tools := []catalog.Tool{
		{Server: "weather", Name: "get_forecast", Description: "Get the weather forecast for a location: temperature, rain and wind for the next days."},
		{Server: "mail", Name: "send_email", Description: "Send an email message to one or more recipients with a subject and body."},
		{Server: "calendar", Name: "create_event", Description: "Create a calendar event with a title, start time and attendees."},
		{Server: "fs", Name: "read_file", Description: "Read the complete contents of a file from the file system."},
		{Server: "finance", Name: "get_stock_price", Description: "Get the latest stock quote and price history for a ticker symbol."},
		{Server: "translate", Name: "translate_text", Description: "Translate text from one language into another."},
	}
	docs := make([][]float32, len(tools))
	for i := range tools {
		catalog.Finalize(&tools[i])
		docs[i] = m.Embed(indexer.Document(tools[i], catalog.Server{ID: tools[i].Server}))
	}
	queries := map[string]string{
		"will it rain in Paris tomorrow?":                 "weather__get_forecast",
		"write a mail to my boss saying I'm late":         "mail__send_email",
		"schedule a meeting with Anna on Monday at 10":    "calendar__create_event",
		"show me what is inside notes.txt":                "fs__read_file",
		"how much is one share of Apple worth right now?": "finance__get_stock_price",
		"how do you say 'good morning' in Japanese?":      "translate__translate_text",
	}
	for q, want := range queries {
		qv := m.Embed(q)
		best, bestScore := "", float32(-2)
		for i, d := range docs {
			var s float32
			for j := range d {
				s += d[j] * qv[j]
			}
			if s > bestScore {
				best, bestScore = tools[i].ID, s
			}
		}
		if best != want {
			t.Errorf("%q ranks %s first, want %s", q, best, want)
		}
	}
}

func TestConcurrentEmbed(t *testing.T) {
	m, err := toolmodel.Load()
	if err != nil {
		t.Fatal(err)
	}
	want := m.Embed("list the files in my home directory")
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				got := m.Embed("list the files in my home directory")
				for j := range got {
					if got[j] != want[j] {
						t.Error("concurrent Embed differs")
						return
					}
				}
			}
		}()
	}
	wg.Wait()
}

func BenchmarkLoad(b *testing.B) {
	for i := 0; i < b.N; i++ {
		sub := toolmodel.FS()
		if _, err := model2vec.LoadFS(sub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEmbedQuery(b *testing.B) {
	m, err := toolmodel.Load()
	if err != nil {
		b.Fatal(err)
	}
	q := "Find the earliest available high-speed train from Beijing South to Shanghai South for tomorrow and tell me the ticket price."
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Embed(q)
	}
}

func BenchmarkEmbedDocument(b *testing.B) {
	m, err := toolmodel.Load()
	if err != nil {
		b.Fatal(err)
	}
	tool := catalog.Tool{Server: "github", Name: "createPullRequest", Description: "Create a new pull request in a GitHub repository. Opens a PR from the head branch into the base branch with a title and an optional body; draft pull requests are supported.",
		InputSchema: []byte(`{"type":"object","properties":{"owner":{"type":"string","description":"Repository owner"},"repo":{"type":"string","description":"Repository name"},"title":{"type":"string","description":"PR title"},"head":{"type":"string","description":"The branch with your changes"},"base":{"type":"string","description":"The branch to merge into"},"draft":{"type":"boolean","description":"Open as draft"}}}`)}
	catalog.Finalize(&tool)
	doc := indexer.Document(tool, catalog.Server{ID: "github", Title: "GitHub", Description: "Repositories, issues and pull requests"})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		m.Embed(doc)
	}
}
