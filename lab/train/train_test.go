package train

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/toolrag/mcp-gateway/pkg/embed"
	"github.com/toolrag/mcp-gateway/pkg/embed/model2vec"
)

// synthTool is a tool of the synthetic corpus and the words users ask for
// it with (deliberately different from its description).
type synthTool struct {
	name, desc string
	asks       []string
}

var synthTools = []synthTool{
	{"get_weather", "Returns the forecast and temperature for a city", []string{"rain", "umbrella", "sunny", "cold", "snow"}},
	{"send_email", "Sends a message to a mailbox address", []string{"mail", "inbox", "write", "colleague", "reply"}},
	{"create_event", "Adds an entry to the calendar", []string{"meeting", "schedule", "appointment", "book", "tomorrow"}},
	{"play_song", "Starts playback of a music track", []string{"listen", "tune", "album", "band", "playlist"}},
	{"find_route", "Computes driving directions between two places", []string{"drive", "way", "navigate", "traffic", "road"}},
	{"stock_quote", "Gets the latest share price of a company", []string{"market", "invest", "ticker", "shares", "trading"}},
	{"translate_text", "Translates text between languages", []string{"french", "german", "spanish", "meaning", "language"}},
	{"set_timer", "Starts a countdown clock", []string{"minutes", "alarm", "remind", "wait", "seconds"}},
}

var synthCities = []string{"paris", "berlin", "tokyo", "lima", "oslo", "cairo", "rome", "delhi", "perth", "quito"}

// writeSynthCorpus writes a two-dataset training folder and a base
// tokenizer, and returns (train dir, tokenizer path, held-out queries by
// tool name).
func writeSynthCorpus(t *testing.T) (string, string, map[string]string) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(42, 0))
	words := map[string]bool{}
	addWords := func(s string) {
		for _, w := range strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '_' || r == ',' || r == '.' || r == '?' }) {
			words[w] = true
		}
	}
	heldOut := map[string]string{}
	for di, ds := range []string{"alpha", "beta"} {
		tools := synthTools[di*4 : di*4+4]
		var tl, pl bytes.Buffer
		for _, st := range tools {
			id := ds + "__" + st.name
			b, _ := json.Marshal(map[string]any{"id": id, "name": st.name, "description": st.desc,
				"input_schema": map[string]any{"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "description": "the city"}}}})
			tl.Write(append(b, '\n'))
			addWords(st.name + " " + st.desc + " city the")
			for k := 0; k < 40; k++ {
				a := st.asks[rng.IntN(len(st.asks))]
				b2 := st.asks[rng.IntN(len(st.asks))]
				c := synthCities[rng.IntN(len(synthCities)-2)]
				q := fmt.Sprintf("please %s %s in %s", a, b2, c)
				addWords(q)
				b, _ := json.Marshal(map[string]any{"query": q, "tool_ids": []string{id}})
				pl.Write(append(b, '\n'))
			}
			// Held out: a city never seen in training and a fresh word order.
			heldOut[st.name] = fmt.Sprintf("%s %s %s", st.asks[4], synthCities[9], st.asks[3])
			addWords(heldOut[st.name])
		}
		sub := filepath.Join(dir, ds)
		if err := os.MkdirAll(sub, 0o755); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(sub, "tools.jsonl"), tl.Bytes(), 0o644)
		os.WriteFile(filepath.Join(sub, "pairs.jsonl"), pl.Bytes(), 0o644)
	}
	// Base vocabulary: special tokens, every word, and single characters.
	vocab := []string{"[PAD]", "[UNK]", "[CLS]", "[SEP]", ":", ",", ".", "_", "?"}
	var ws []string
	for w := range words {
		ws = append(ws, w)
	}
	sort.Strings(ws)
	vocab = append(vocab, ws...)
	for c := 'a'; c <= 'z'; c++ {
		vocab = append(vocab, "##"+string(c))
	}
	for _, x := range []string{"tool", "type", "server", "read", "write", "action"} {
		if !words[x] {
			vocab = append(vocab, x)
		}
	}
	j, err := model2vec.WordPieceJSON(vocab, "[UNK]")
	if err != nil {
		t.Fatal(err)
	}
	tokPath := filepath.Join(dir, "base-tokenizer.json")
	os.WriteFile(tokPath, j, 0o644)
	return dir, tokPath, heldOut
}

func synthOptions(dir, tok string) Options {
	return Options{TrainDir: dir, BaseTokenizer: tok, Dim: 32, SVDDim: 8, Epochs: 12, BatchSize: 32,
		LearningRate: 0.02, HoldOut: -1, MinCount: 1, Threads: 2, MaxPerTool: 40}
}

func TestTrainLearnsSyntheticTools(t *testing.T) {
	dir, tok, heldOut := writeSynthCorpus(t)
	out := filepath.Join(t.TempDir(), "model")
	opts := synthOptions(dir, tok)
	opts.OutDir = out
	var log bytes.Buffer
	res, err := Train(context.Background(), opts, &log)
	if err != nil {
		t.Fatal(err)
	}
	if !(res.LossEnd < 0.5*res.LossStart) {
		t.Fatalf("loss did not drop: first epoch %.4f, last %.4f\n%s", res.LossStart, res.LossEnd, log.String())
	}
	if res.QuantMaxErr <= 0 || res.QuantMaxErr > 0.03 {
		t.Fatalf("int8 changed query-document cosines by up to %v", res.QuantMaxErr)
	}
	m, err := model2vec.LoadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != 32 {
		t.Fatalf("Dim = %d", m.Dim())
	}
	corpus, err := LoadCorpus(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([][]float32, len(corpus.Tools))
	for i, tl := range corpus.Tools {
		docs[i] = m.Embed(tl.Document())
	}
	for name, q := range heldOut {
		qv := m.Embed(q)
		best, bestScore := -1, float32(math.Inf(-1))
		for i, d := range docs {
			if s := dot(qv, d); s > bestScore {
				best, bestScore = i, s
			}
		}
		if got := corpus.Tools[best].Name; got != name {
			t.Errorf("held-out query %q ranks %s first, want %s", q, got, name)
		}
	}
}

func TestTrainReproducibleAcrossThreads(t *testing.T) {
	dir, tok, _ := writeSynthCorpus(t)
	var files [2][]byte
	for i, threads := range []int{1, 2} {
		opts := synthOptions(dir, tok)
		opts.Epochs = 3
		opts.Threads = threads
		opts.OutDir = filepath.Join(t.TempDir(), "m")
		if _, err := Train(context.Background(), opts, nil); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(filepath.Join(opts.OutDir, model2vec.SafetensorsFile))
		if err != nil {
			t.Fatal(err)
		}
		files[i] = b
	}
	if !bytes.Equal(files[0], files[1]) {
		t.Fatal("same seed, different threads: model.safetensors differs")
	}
	opts := synthOptions(dir, tok)
	opts.Epochs = 3
	opts.Seed = 99
	opts.OutDir = filepath.Join(t.TempDir(), "m")
	if _, err := Train(context.Background(), opts, nil); err != nil {
		t.Fatal(err)
	}
	other, _ := os.ReadFile(filepath.Join(opts.OutDir, model2vec.SafetensorsFile))
	if bytes.Equal(other, files[0]) {
		t.Fatal("a different seed gave the same model")
	}
}

func TestTrainValidationSplit(t *testing.T) {
	dir, tok, _ := writeSynthCorpus(t)
	opts := synthOptions(dir, tok)
	opts.HoldOut = 0.25
	opts.Epochs = 2
	res, err := Train(context.Background(), opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Validation.Queries == 0 || len(res.PerDataset) != 2 {
		t.Fatalf("validation = %+v, per dataset %v", res.Validation, res.PerDataset)
	}
	c, _ := LoadCorpus(dir, nil)
	_, val, held := c.split(0.25, opts.Seed)
	if len(held) != 2 { // one of four labelled tools per dataset
		t.Fatalf("held out %v", held)
	}
	for _, p := range val {
		if !held[p.ToolIDs[0]] {
			t.Fatalf("validation pair %q is for a training tool", p.Query)
		}
	}
}

func TestTrainErrors(t *testing.T) {
	dir, tok, _ := writeSynthCorpus(t)
	bad := t.TempDir()
	os.MkdirAll(filepath.Join(bad, "x"), 0o755)
	os.WriteFile(filepath.Join(bad, "x", "tools.jsonl"), []byte(`{"id":"x__a","name":"a"}`+"\n"), 0o644)
	os.WriteFile(filepath.Join(bad, "x", "pairs.jsonl"), []byte(`{"query":"q","tool_ids":["x__missing"]}`+"\n"), 0o644)
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"no train dir", Options{BaseTokenizer: tok}, "TrainDir is required"},
		{"empty dir", Options{TrainDir: t.TempDir(), BaseTokenizer: tok}, "no dataset folders"},
		{"unknown tool", Options{TrainDir: bad, BaseTokenizer: tok}, `tool "x__missing" is not in tools.jsonl`},
		{"bad dtype", Options{TrainDir: dir, BaseTokenizer: tok, DType: "q4"}, `dtype "q4"`},
		{"missing tokenizer", Options{TrainDir: dir, BaseTokenizer: filepath.Join(dir, "nope.json")}, "base tokenizer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Train(context.Background(), tt.opts, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want it to contain %q", err, tt.want)
			}
		})
	}
}

func TestTrainCancelled(t *testing.T) {
	dir, tok, _ := writeSynthCorpus(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Train(ctx, synthOptions(dir, tok), nil)
	if err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Fatalf("err = %v", err)
	}
}

func TestJacobiEigen(t *testing.T) {
	// A = Q diag(5, 2, -1) Qᵀ for a rotation Q.
	c, s := math.Cos(0.3), math.Sin(0.3)
	Q := []float64{c, -s, 0, s, c, 0, 0, 0, 1}
	d := []float64{5, 2, -1}
	A := make([]float64, 9)
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				A[i*3+j] += Q[i*3+k] * d[k] * Q[j*3+k]
			}
		}
	}
	ev, vec := jacobiEigen(A, 3)
	got := append([]float64(nil), ev...)
	sort.Float64s(got)
	want := []float64{-1, 2, 5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-9 {
			t.Fatalf("eigenvalues %v, want %v", ev, want)
		}
	}
	// A v = λ v for every column.
	for e := 0; e < 3; e++ {
		for i := 0; i < 3; i++ {
			var av float64
			for k := 0; k < 3; k++ {
				av += A[i*3+k] * vec[k*3+e]
			}
			if math.Abs(av-ev[e]*vec[i*3+e]) > 1e-9 {
				t.Fatalf("column %d is not an eigenvector", e)
			}
		}
	}
}

func TestPruneVocab(t *testing.T) {
	vocab := []string{"[PAD]", "[UNK]", "hello", "help", "##ful", "world", "h", "##e", "##l", "##p", "##o", "w", "##r", "##d", "zebra"}
	j, _ := model2vec.WordPieceJSON(vocab, "[UNK]")
	base, _ := model2vec.ParseTokenizer(j)
	texts := []string{"hello hello world", "helpful", "helpful world"}
	got, err := pruneVocab(base, texts, 2)
	if err != nil {
		t.Fatal(err)
	}
	// "hello" 2, "world" 2, "help"+"##ful" 2 each are kept; "zebra" unused.
	want := map[string]bool{"[PAD]": true, "[UNK]": true, "hello": true, "world": true, "help": true, "##ful": true}
	if len(got) != len(want) || got[0] != "[PAD]" || got[1] != "[UNK]" {
		t.Fatalf("pruned vocab %q", got)
	}
	for _, g := range got {
		if !want[g] {
			t.Fatalf("unexpected token %q in %q", g, got)
		}
	}
}

// TestAddWords: words the base vocabulary splits into pieces and the text
// uses often enough become whole tokens, after the base tokens; single
// pieces, rare words and words with fewer than three letters do not.
func TestAddWords(t *testing.T) {
	vocab := []string{"[PAD]", "[UNK]", "help", "##ful", "del", "##ete", "x", "##2", "h", "##e", "##l", "##p"}
	j, _ := model2vec.WordPieceJSON(vocab, "[UNK]")
	base, _ := model2vec.ParseTokenizer(j)
	texts := []string{"Delete helpful help", "delete, delete! x2 x2 x2", "helpful"}
	got, added := addWords(base, texts, 2)
	want := append(slices.Clone(vocab), "delete", "helpful")
	if added != 2 || !slices.Equal(got, want) {
		t.Fatalf("addWords = %q (%d added), want %q", got, added, want)
	}
	// The extended vocabulary tokenizes the added word whole.
	j, _ = model2vec.WordPieceJSON(got, "[UNK]")
	ext, _ := model2vec.ParseTokenizer(j)
	if ids := ext.Encode("delete"); len(ids) != 1 || ext.Token(ids[0]) != "delete" {
		t.Errorf("extended tokenizer splits delete into %v", ids)
	}
}

func TestBM25RanksExactMatchFirst(t *testing.T) {
	docs := []bag{makeBag([]int{1, 2, 3}), makeBag([]int{4, 5, 6, 6}), makeBag([]int{1, 7})}
	ix := newBM25(docs)
	got := ix.search(makeBag([]int{6, 1}), 2, nil)
	if len(got) != 2 || got[0] != 1 {
		t.Fatalf("search = %v, want doc 1 first", got)
	}
	if got := ix.search(makeBag([]int{99}), 3, nil); len(got) != 0 {
		t.Fatalf("no match should give nothing, got %v", got)
	}
}

func TestTopK(t *testing.T) {
	got := topK([]float32{0.1, 0.9, 0.5, 0.9, -1}, 3)
	want := []int{1, 3, 2}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("topK = %v, want %v", got, want)
		}
	}
}

// TestTrainHashWeight: the weight of the hashing features the table is
// trained next to is recorded in the metadata, and the model served the
// way it was trained (embed.NewBuiltinWith with that weight) ranks every
// held-out query's tool first.
func TestTrainHashWeight(t *testing.T) {
	dir, tok, heldOut := writeSynthCorpus(t)
	corpus, err := LoadCorpus(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opt  float64
		meta string
	}{{-1, "0"}, {0, "0.5"}, {2, "2"}} {
		opts := synthOptions(dir, tok)
		opts.HashWeight = tc.opt
		res, err := Train(context.Background(), opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := res.Model.Metadata()["hash_weight"]; got != tc.meta {
			t.Errorf("HashWeight %v: metadata hash_weight %q, want %q", tc.opt, got, tc.meta)
		}
		w, _ := strconv.ParseFloat(tc.meta, 64)
		if w == 0 {
			w = -1 // the model alone
		}
		emb, err := embed.NewBuiltinWith(embed.BuiltinConfig{Model: res.Model, HashWeight: w})
		if err != nil {
			t.Fatal(err)
		}
		texts := make([]string, len(corpus.Tools))
		for i, tl := range corpus.Tools {
			texts[i] = tl.Document()
		}
		docs, err := emb.EmbedDocuments(context.Background(), texts)
		if err != nil {
			t.Fatal(err)
		}
		for name, q := range heldOut {
			qv, _ := emb.EmbedQuery(context.Background(), q)
			best, bestScore := -1, float32(math.Inf(-1))
			for i, d := range docs {
				if s := dot(qv, d); s > bestScore {
					best, bestScore = i, s
				}
			}
			if got := corpus.Tools[best].Name; got != name {
				t.Errorf("HashWeight %v: held-out query %q ranks %s first, want %s", tc.opt, q, got, name)
			}
		}
	}
}
