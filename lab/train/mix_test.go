package train

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// writeDataset writes a dataset folder with the given tools.jsonl and
// pairs.jsonl lines.
func writeDataset(t *testing.T, dir string, tools, pairs []string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools.jsonl"), []byte(strings.Join(tools, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if pairs != nil {
		if err := os.WriteFile(filepath.Join(dir, "pairs.jsonl"), []byte(strings.Join(pairs, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// mcpTools is a small MCP-style dataset: two servers whose tools share
// objects and differ by verb.
var mcpTools = []string{
	`{"id":"m__shop__create_coupon","server":"shop","name":"create_coupon","description":"Create a coupon."}`,
	`{"id":"m__shop__list_coupons","server":"shop","name":"list_coupons","description":"List coupons."}`,
	`{"id":"m__shop__delete_coupon","server":"shop","name":"delete_coupon","description":"Delete a coupon."}`,
	`{"id":"m__shop__refund_payment","server":"shop","name":"refund_payment","description":"Refund a payment."}`,
	`{"id":"m__files__read_file","server":"files","name":"read_file","description":"Read a file."}`,
	`{"id":"m__files__write_file","server":"files","name":"write_file","description":"Write a file."}`,
	`{"id":"m__files__list_directory","server":"files","name":"list_directory","description":"List a directory."}`,
}

var mcpPairs = []string{
	`{"query":"make new discount code","tool_ids":["m__shop__create_coupon"]}`,
	`{"query":"show me every discount code","tool_ids":["m__shop__list_coupons"]}`,
	`{"query":"what is in notes.txt","tool_ids":["m__files__read_file"]}`,
}

func TestLoadCorpusExtraAndExclude(t *testing.T) {
	root := t.TempDir()
	shared := filepath.Join(root, "shared")
	writeDataset(t, filepath.Join(shared, "alpha"), []string{`{"id":"alpha__a","name":"a","description":"first"}`}, []string{`{"query":"q","tool_ids":["alpha__a"]}`})
	writeDataset(t, filepath.Join(shared, "devset"), []string{`{"id":"devset__b","server":"s","name":"b"}`}, nil)
	extra := writeDataset(t, filepath.Join(root, "repo", "mcp"), mcpTools, mcpPairs)

	c, err := LoadCorpus(shared, []string{"devset"}, extra)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"alpha", "mcp"}; !slices.Equal(c.Datasets, want) {
		t.Fatalf("datasets %v, want %v", c.Datasets, want)
	}
	if len(c.Tools) != 1+len(mcpTools) || len(c.Pairs) != 1+len(mcpPairs) {
		t.Fatalf("%d tools, %d pairs", len(c.Tools), len(c.Pairs))
	}
	for _, tl := range c.Tools {
		if tl.ID == "devset__b" {
			t.Fatal("an excluded dataset was loaded")
		}
		if tl.Dataset == "mcp" && tl.Server == "" {
			t.Fatalf("%s lost its server", tl.ID)
		}
	}
	// An excluded name also drops an extra folder.
	c, err = LoadCorpus(shared, []string{"mcp"}, extra)
	if err != nil || slices.Contains(c.Datasets, "mcp") {
		t.Fatalf("exclude of an extra folder: %v, %v", c.Datasets, err)
	}

	errs := []struct {
		name  string
		extra string
		want  string
	}{
		{"same name as a shared dataset", writeDataset(t, filepath.Join(root, "x", "alpha"), mcpTools, nil), `two datasets named "alpha"`},
		{"no tools.jsonl", filepath.Join(root, "missing"), "extra dataset"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadCorpus(shared, nil, tt.extra)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDocumentHasServerLine(t *testing.T) {
	tests := []struct {
		tool Tool
		want string // the server line the document must hold
	}{
		{Tool{Name: "create_coupon", Description: "Create a coupon.", Server: "stripe-remote"}, "server: stripe remote"},
		{Tool{Name: "GetWeather", Description: "Weather."}, "server:"},
	}
	for _, tt := range tests {
		doc := tt.tool.Document()
		if !slices.Contains(strings.Split(doc, "\n"), tt.want) {
			t.Errorf("Document(%+v) = %q, want line %q", tt.tool, doc, tt.want)
		}
	}
}

// mcpTrainer builds a trainer over the MCP-style dataset without training.
func mcpTrainer(t *testing.T, opts Options) *trainer {
	t.Helper()
	dir := writeDataset(t, filepath.Join(t.TempDir(), "mcp"), mcpTools, mcpPairs)
	c, err := LoadCorpus(filepath.Dir(dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	opts.TrainDir = filepath.Dir(dir)
	opts.defaults()
	var vocab []string
	seen := map[string]bool{}
	for _, s := range append(mcpTools, mcpPairs...) {
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !(r >= 'a' && r <= 'z') }) {
			if !seen[w] {
				seen[w] = true
				vocab = append(vocab, w)
			}
		}
	}
	j, err := model2vec.WordPieceJSON(append([]string{"[UNK]"}, vocab...), "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	tok, err := model2vec.ParseTokenizer(j)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]string, len(c.Tools))
	for i, tl := range c.Tools {
		docs[i] = tl.Document()
	}
	return newTrainer(opts, c, tok, docs, c.Pairs, nil, map[string]bool{})
}

func TestServerNegatives(t *testing.T) {
	names := func(tr *trainer, pair int) []string {
		var out []string
		for _, ti := range tr.hard[pair] {
			out = append(out, tr.corpus.Tools[ti].Name)
		}
		return out
	}
	// Pair 0 ("make new discount code" → create_coupon) shares no word
	// with any document, so BM25 alone finds no negative; its server's
	// other tools are its hard negatives, the tools of another server
	// are not.
	tr := mcpTrainer(t, Options{})
	got := names(tr, 0)
	slices.Sort(got)
	if want := []string{"delete_coupon", "list_coupons", "refund_payment"}; !slices.Equal(got, want) {
		t.Fatalf("hard negatives of %q = %v, want %v", tr.pairs[0].Query, got, want)
	}
	// At most ServerNegatives places go to siblings.
	tr = mcpTrainer(t, Options{ServerNegatives: 1})
	if got := names(tr, 0); len(got) != 1 {
		t.Fatalf("ServerNegatives 1: %v", got)
	}
	// Off: BM25 hits of the dataset only (none for this query).
	tr = mcpTrainer(t, Options{ServerNegatives: -1})
	if got := names(tr, 0); len(got) != 0 {
		t.Fatalf("ServerNegatives off: %v", got)
	}
	// Never a positive.
	tr = mcpTrainer(t, Options{})
	for i := range tr.pairs {
		for _, ti := range tr.hard[i] {
			if contains(tr.pairPos[i], ti) {
				t.Fatalf("pair %d has its own tool as a negative", i)
			}
		}
	}
}

func TestDatasetWeightRepeats(t *testing.T) {
	count := func(w float64) int {
		tr := mcpTrainer(t, Options{DatasetWeight: map[string]float64{"mcp": w}})
		return len(tr.epochExamples(rand.New(rand.NewPCG(1, 2))))
	}
	if got := count(1); got != len(mcpPairs) {
		t.Fatalf("weight 1: %d examples, want %d", got, len(mcpPairs))
	}
	if got := count(2); got != 2*len(mcpPairs) {
		t.Fatalf("weight 2: %d examples, want %d", got, 2*len(mcpPairs))
	}
	if got := count(0.5); got != len(mcpPairs) { // the cap (12) does not bind
		t.Fatalf("weight 0.5: %d examples, want %d", got, len(mcpPairs))
	}
}
