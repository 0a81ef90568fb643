package embed

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"
)

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestBuiltinDeterministicAndNormalised(t *testing.T) {
	ctx := context.Background()
	texts := []string{
		"get_weather_forecast: Get the weather forecast for a city",
		"createGitHubIssue opens an issue in a repository",
		"使用必应搜索指定的关键词",
		"x",
	}
	a, err := NewHashing().EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewHashing().EmbedDocuments(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i := range texts {
		if len(a[i]) != BuiltinDim {
			t.Fatalf("text %d: got %d dims, want %d", i, len(a[i]), BuiltinDim)
		}
		if n := norm(a[i]); math.Abs(n-1) > 1e-5 {
			t.Errorf("text %q: norm %v, want 1", texts[i], n)
		}
		for j := range a[i] {
			if a[i][j] != b[i][j] {
				t.Fatalf("text %q: component %d differs between runs (%v vs %v)", texts[i], j, a[i][j], b[i][j])
			}
		}
		q, _ := NewHashing().EmbedQuery(ctx, texts[i])
		if d := dot(q, a[i]); math.Abs(float64(d)-1) > 1e-5 {
			t.Errorf("text %q: query and document embedding differ (cosine %v)", texts[i], d)
		}
	}
}

func TestBuiltinEmptyTextIsZero(t *testing.T) {
	for _, s := range []string{"", "   ", "--- !!!", "the of and"} {
		v, err := NewHashing().EmbedQuery(context.Background(), s)
		if err != nil {
			t.Fatal(err)
		}
		if n := norm(v); n != 0 {
			t.Errorf("%q: norm %v, want the zero vector", s, n)
		}
	}
}

func TestBuiltinModelID(t *testing.T) {
	e := NewHashing()
	if got, want := e.ModelID(), fmt.Sprintf("builtin-hash-v1-%d", BuiltinDim); got != want {
		t.Errorf("ModelID = %q, want %q", got, want)
	}
	if e.Dim() != BuiltinDim {
		t.Errorf("Dim = %d", e.Dim())
	}
}

// Queries must score their tool above unrelated tools even when the words
// differ in form (plural, -ing, camelCase, snake_case).
func TestBuiltinNearMissVocabulary(t *testing.T) {
	ctx := context.Background()
	e := NewHashing()
	tests := []struct {
		query, want string
		others      []string
	}{
		{"weather forecasts", "get_weather_forecast: Returns the forecast for a location",
			[]string{"send_email: Send an email message to a recipient", "list_files: List the files in a directory"}},
		{"creating issues on github", "createGitHubIssue: Create an issue in a GitHub repository",
			[]string{"get_weather_forecast: Returns the forecast for a location", "read_file: Read a file from disk"}},
		{"search queries", "run_search_query: Run a full-text query against the search index",
			[]string{"delete_user: Delete a user account", "translate_text: Translate text into another language"}},
		{"convert currency", "currencyConverter: converts amounts between currencies",
			[]string{"convert_image_format: convert an image to png", "get_stock_price: quote a stock ticker"}},
		{"必应搜索", "bing_search: 使用必应搜索指定的关键词",
			[]string{"get_weather: 获取天气预报", "send_email: Send an email"}},
	}
	for _, tc := range tests {
		q, err := e.EmbedQuery(ctx, tc.query)
		if err != nil {
			t.Fatal(err)
		}
		docs, err := e.EmbedDocuments(ctx, append([]string{tc.want}, tc.others...))
		if err != nil {
			t.Fatal(err)
		}
		good := dot(q, docs[0])
		for i, o := range tc.others {
			if bad := dot(q, docs[i+1]); bad >= good {
				t.Errorf("query %q: unrelated %q scores %.3f >= %.3f of %q", tc.query, o, bad, good, tc.want)
			}
		}
		if good <= 0.1 {
			t.Errorf("query %q: related tool scores only %.3f", tc.query, good)
		}
	}
}

func TestStem(t *testing.T) {
	tests := map[string]string{
		"forecasts": "forecast", "forecast": "forecast", "queries": "query", "query": "query",
		"creating": "creat", "created": "creat", "create": "creat", "boxes": "box", "searches": "search",
		"running": "run", "status": "status", "class": "class", "files": "file", "file": "file", "api": "api",
		"analysis": "analysis", "listed": "list", "emails": "email",
	}
	for in, want := range tests {
		if got := stem(in); got != want {
			t.Errorf("stem(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestBuiltinCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewHashing().EmbedDocuments(ctx, []string{"a b c"}); err == nil {
		t.Error("EmbedDocuments with a cancelled context returned no error")
	}
	if _, err := NewHashing().EmbedQuery(ctx, "a b c"); err == nil {
		t.Error("EmbedQuery with a cancelled context returned no error")
	}
}

// syntheticTools makes n tool documents of realistic length and vocabulary.
func syntheticTools(n int) []string {
	r := rand.New(rand.NewSource(1))
	verbs := []string{"get", "list", "create", "update", "delete", "search", "send", "convert", "fetch", "run"}
	nouns := strings.Fields("file issue repository weather forecast email message calendar event user account " +
		"invoice payment order product stock price ticket comment branch commit image video document page " +
		"database table row query report chart map route flight hotel booking playlist song channel")
	words := strings.Fields("the a for of to in with from and returns given specified current optional " +
		"identifier name list details status results items by date time range limit offset format text " +
		"content url path value number string location city country language region")
	docs := make([]string, n)
	for i := range docs {
		var b strings.Builder
		v, o := verbs[r.Intn(len(verbs))], nouns[r.Intn(len(nouns))]
		fmt.Fprintf(&b, "server%d__%s_%s_%d: %s %s.", i%200, v, o, i, strings.ToUpper(v[:1])+v[1:], o)
		for j := 0; j < 40+r.Intn(40); j++ {
			if r.Intn(3) == 0 {
				b.WriteString(" " + nouns[r.Intn(len(nouns))])
			} else {
				b.WriteString(" " + words[r.Intn(len(words))])
			}
		}
		fmt.Fprintf(&b, " Parameters: %s_id, limit, %sFormat", o, nouns[r.Intn(len(nouns))])
		docs[i] = b.String()
	}
	return docs
}

func BenchmarkBuiltinEmbed10k(b *testing.B) {
	docs := syntheticTools(10000)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		// A fresh embedder each time: the word cache starts empty, as at boot.
		if _, err := NewHashing().EmbedDocuments(ctx, docs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/10k")
}

func BenchmarkBuiltinEmbedQuery(b *testing.B) {
	e := NewHashing()
	ctx := context.Background()
	for i := 0; i < b.N; i++ {
		if _, err := e.EmbedQuery(ctx, "find the weather forecast for Paris tomorrow"); err != nil {
			b.Fatal(err)
		}
	}
}

// TestHashingDeterministic: the same text gives the same bits every time
// (features are summed in text order, not map order); the trainer's
// byte-reproducible model depends on it.
func TestHashingDeterministic(t *testing.T) {
	text := strings.Repeat("Create a new spreadsheet row, update the calendar event, send an email to the team and then list open pull requests in the repository; ", 4)
	want, _ := NewHashing().EmbedQuery(context.Background(), text)
	for i := 0; i < 30; i++ {
		got, _ := NewHashing().EmbedQuery(context.Background(), text)
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("run %d: dimension %d is %v, was %v", i, j, got[j], want[j])
			}
		}
	}
}
